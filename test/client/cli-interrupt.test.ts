import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { runCli, startCli } from '../helpers/run-cli.js';
import { sampleTree, sha256, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

// Ctrl-C in the middle of a transfer: a real server, a transfer the proxy stalls after 200 kB.
describe('sdc download interrupted by Ctrl-C', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  const tree = sampleTree();
  const big = Object.keys(tree).find((p) => tree[p]!.length > 1_000_000)!;
  const name = big.slice(big.lastIndexOf('/') + 1);

  beforeAll(async () => {
    world = await startClientWorld();
    const source = await world.folder('source');
    await writeTree(source, { [big]: tree[big]! });
    const client = new Client({ url: world.url });
    await client.upload(join(source, big), { dataDir: source });
    await client.close();
  });
  afterAll(() => world?.stop());

  it('says the partial file was kept and will resume, exits 130; the same command then resumes it', async () => {
    const dest = await world.folder('dest');
    const part = join(dest, ...big.split('/')) + '.part';
    world.proxy.inject((r) => r.method === 'GET' && r.url.startsWith('/store/'), { stallAfter: 200_000 });
    const cli = startCli(['download', name], { cwd: dest, env: world.env });
    await expect.poll(async () => (await stat(part).catch(() => undefined))?.size ?? 0, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await cli.stop('SIGINT')).toBe(130);
    const stderr = cli.stderrLines.join('\n');
    expect(stderr).toContain(`sdc download: interrupted; kept the partial file:\n  ${part}\n`);
    expect(stderr).toContain('Run the same command again: it resumes from there');

    world.proxy.reset();
    const again = await runCli(['download', name], { cwd: dest, env: world.env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('1 resumed');
    expect(world.proxy.seen('/store/', 'GET')[0]!.headers.range).toMatch(/^bytes=[1-9]\d*-$/);
    expect(sha256(await readFile(join(dest, ...big.split('/'))))).toBe(sha256(tree[big]!));
  });
});
