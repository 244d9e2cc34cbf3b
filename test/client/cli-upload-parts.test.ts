import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { sha256, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

const MiB = 1024 * 1024;
const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_parts_20240105_20240105_v00-01.cdf';
const SMALL = 'imap/swe/l1a/2024/01/imap_swe_l1a_whole_20240105_20240105_v00-01.cdf';

describe('sdc upload sends large files in parts', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  let dataDir: string;
  const big = randomBytes(40 * MiB);

  beforeAll(async () => {
    world = await startClientWorld();
    dataDir = await world.folder('data');
    await writeTree(dataDir, { [PATH]: big, [SMALL]: Buffer.from('a small file') });
  });
  afterAll(() => world.stop());

  it('in parts from --part-threshold, with --parts at once; below it, by one PUT', async () => {
    const result = await runCli(['upload', '--part-threshold', '16', '--parts', '2', 'imap'], { cwd: dataDir, env: world.env });
    expect(result.stderr).toContain('sdc upload: 2 uploaded');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').sort()).toEqual([PATH, SMALL]);
    const puts = world.proxy.seen('/store/', 'PUT');
    // 40 MiB in 16 MiB parts: three part PUTs, and one plain PUT for the small file.
    expect(puts.filter((r) => r.url.includes('partNumber='))).toHaveLength(3);
    expect(puts.filter((r) => !r.url.includes('partNumber='))).toHaveLength(1);
    expect(world.proxy.seen('/uploads/', 'POST')).toHaveLength(2);
    const records = (await (await fetch(`${world.url}/query?file_path=${PATH}`)).json()) as { sha256: string; size: number }[];
    expect(records).toMatchObject([{ sha256: sha256(big), size: 40 * MiB }]);
    expect((await readFile(join(world.server.home, 'store', PATH))).equals(big)).toBe(true);
  });
});
