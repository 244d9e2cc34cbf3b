import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, IntegrityError } from '../../src/client/index.js';
import { runCli } from '../helpers/run-cli.js';
import { sha256, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

// docs/client.md, "Checked transfers": uploads declare the file's SHA-256; downloads check Repr-Digest.
const SMALL = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const LARGE = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const CLI_FILE = 'imap/hit/l0/2024/02/imap_hit_l0_raw_20240229_20240229_v00-02.pkts';

describe('checked transfers through the SDK and the CLI', () => {
  let world: ClientWorld;
  let client: Client;
  let dataDir: string;
  const tree: Record<string, Buffer> = { [SMALL]: Buffer.from('small file'), [LARGE]: Buffer.alloc(200_000, 7), [CLI_FILE]: Buffer.from('sent by sdc upload') };

  beforeAll(async () => {
    world = await startClientWorld();
    client = new Client({ url: world.url, retry: { retries: 0, baseDelayMs: 10 } });
    dataDir = await world.folder('data');
    await writeTree(dataDir, tree);
  });
  afterAll(async () => {
    await client.close();
    await world.stop();
  });

  it('declares the SHA-256 of small (read once) and streamed files alike', async () => {
    for (const path of [SMALL, LARGE]) {
      expect(await client.upload(join(dataDir, path), { dataDir })).toMatchObject({ path, status: 'uploaded' });
      const asked = world.proxy.requests.filter((r) => r.url.startsWith(`/upload/${path}`));
      expect(asked.map((r) => r.url)).toEqual([`/upload/${path}?sha256=${sha256(tree[path]!)}`]);
    }
  });

  it('sdc upload sends ?sha256=', async () => {
    const result = await runCli(['upload', CLI_FILE], { cwd: dataDir, env: world.env });
    expect(result.code, result.stderr).toBe(0);
    expect(world.proxy.requests.map((r) => r.url)).toContain(`/upload/${CLI_FILE}?sha256=${sha256(tree[CLI_FILE]!)}`);
  });

  it('checks a download against the store\'s Repr-Digest and names both digests when they differ', async () => {
    const dest = await world.folder('mirror');
    expect(await client.download(SMALL, { dest })).toMatchObject({ status: 'downloaded', verified: true });
    // The stored bytes changed out of band (same size): Repr-Digest, from the record, tells.
    const other = Buffer.from('SMALL FILE');
    await writeFile(join(world.server.home, 'store', SMALL), other);
    const failed = await client.download(SMALL, { dest: await world.folder('mirror2') }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(IntegrityError);
    expect((failed as Error).message).toContain(`SHA-256 ${sha256(other)} differs from the store's Repr-Digest ${sha256(tree[SMALL]!)}`);
  });

  it('resumes a .part that is already whole, its size not known, without fetching it again (416 bytes */N)', async () => {
    const dest = await world.folder('whole-part');
    const local = join(dest, ...LARGE.split('/'));
    await mkdir(dirname(local), { recursive: true });
    await writeFile(`${local}.part`, tree[LARGE]!);
    const before = world.proxy.requests.length;
    // The caller's record says nothing of the size (a record from an older server, a watch entry).
    const { size: _size, sha256: _sha256, ...record } = (await client.find(LARGE))!;
    const result = await client.download(LARGE, { dest, record });
    expect(result).toMatchObject({ status: 'downloaded', resumedFrom: tree[LARGE]!.length });
    const transfers = world.proxy.requests.slice(before).filter((r) => r.url.startsWith('/store/') && r.method === 'GET');
    expect(transfers.map((r) => r.headers.range)).toEqual([`bytes=${tree[LARGE]!.length}-`]);
    expect(sha256(await readFile(local))).toBe(sha256(tree[LARGE]!));
  });
});
