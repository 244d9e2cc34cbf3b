import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree, sha256, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

// Each test runs the CLI as a child process, some several times: allow for a busy machine.
// Bytes are compared by SHA-256: a deep equality of megabyte buffers is slow in vitest.
describe('sdc download against a real server', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  const tree = sampleTree();
  const paths = Object.keys(tree).sort();
  const big = paths.find((p) => tree[p]!.length === 1_500_000)!;
  const bigName = big.slice(big.lastIndexOf('/') + 1);
  let dest: string;
  let n = 0;
  const local = (path: string) => join(dest, ...path.split('/'));
  const transfers = () => world.proxy.seen('/store/', 'GET');

  beforeAll(async () => {
    world = await startClientWorld();
    const source = await world.folder('source');
    await writeTree(source, tree);
    const client = new Client({ url: world.url });
    for (const path of paths) await client.upload(join(source, path), { dataDir: source });
    await client.close();
  });
  afterAll(() => world.stop());
  beforeEach(async () => {
    dest = await world.folder(`dest-${++n}`);
    world.proxy.reset();
  });

  it('downloads by stored path and by bare name into an empty directory, byte for byte, each file once', async () => {
    const again = paths[0]!.slice(paths[0]!.lastIndexOf('/') + 1);
    const result = await runCli(['download', '--data-dir', dest, paths[0]!, bigName, again], { env: world.env });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').sort()).toEqual([local(paths[0]!), local(big)].sort());
    expect(sha256(await readFile(local(paths[0]!)))).toBe(sha256(tree[paths[0]!]!));
    expect(sha256(await readFile(local(big)))).toBe(sha256(tree[big]!));
    expect(existsSync(`${local(big)}.part`)).toBe(false);
    expect(result.stderr).toContain('sdc download: 2 downloaded');
  });

  it('downloads everything a query matches, then skips identical copies, and --force fetches again', async () => {
    const first = await runCli(['download', '--query', '--version', '*', '--yes'], { cwd: dest, env: world.env });
    expect(first.code).toBe(0);
    for (const path of paths) expect(sha256(await readFile(local(path)))).toBe(sha256(tree[path]!));
    expect(transfers()).toHaveLength(4);

    world.proxy.requests.length = 0;
    const again = await runCli(['download', '--query', '--instrument', 'swe'], { cwd: dest, env: world.env });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('sdc download: 2 already present');
    expect(transfers()).toHaveLength(0);

    const forced = await runCli(['download', '--force', '--query', '--instrument', 'swe'], { cwd: dest, env: world.env });
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('sdc download: 2 downloaded');
    expect(transfers()).toHaveLength(2);
  });

  it('replaces a local copy that differs from the archive', async () => {
    await writeTree(dest, { [paths[0]!]: Buffer.from('edited locally') });
    const result = await runCli(['download', '--data-dir', dest, paths[0]!], { env: world.env });
    expect(result.code).toBe(0);
    expect(sha256(await readFile(local(paths[0]!)))).toBe(sha256(tree[paths[0]!]!));
  });

  it('resumes a partial file left by an interrupted run with a Range request', async () => {
    const half = 600_000;
    await writeTree(dest, { [`${big}.part`]: tree[big]!.subarray(0, half) });
    const result = await runCli(['download', '--data-dir', dest, big], { env: world.env });
    expect(result.code).toBe(0);
    expect(transfers().map((r) => r.headers.range)).toEqual([`bytes=${half}-`]);
    expect(sha256(await readFile(local(big)))).toBe(sha256(tree[big]!));
    expect(existsSync(`${local(big)}.part`)).toBe(false);
    expect(result.stderr).toContain('sdc download: 1 resumed');
  });

  it('resumes within the run when the transfer is cut in the middle', async () => {
    world.proxy.inject((r) => r.url.startsWith('/store/') && r.method === 'GET', { cutAfter: 400_000 });
    const result = await runCli(['download', '--data-dir', dest, big], { env: world.env });
    expect(result.code).toBe(0);
    // The second attempt asks for the rest of what reached the disk (at most the 400000 bytes sent).
    // A resume within the run is still counted as "downloaded": "resumed" is for an earlier run's .part.
    const [first, second, ...more] = transfers().map((r) => r.headers.range);
    expect([first, more]).toEqual([undefined, []]);
    const received = Number(/^bytes=(\d+)-$/.exec(String(second))?.[1]);
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThanOrEqual(400_000);
    expect(result.stderr).toMatch(/transfer cut off after \d+ bytes \(.+\); retry 1 of 4/);
    expect(result.stderr).toContain('sdc download: 1 downloaded');
    expect(sha256(await readFile(local(big)))).toBe(sha256(tree[big]!));
  });

  it('detects a partial file whose bytes are wrong and fetches the file again from the start', async () => {
    await writeTree(dest, { [`${big}.part`]: Buffer.alloc(500_000, 7) });
    const result = await runCli(['download', '--data-dir', dest, big], { env: world.env });
    expect(result.code).toBe(0);
    expect(transfers().map((r) => r.headers.range)).toEqual(['bytes=500000-', undefined]);
    expect(sha256(await readFile(local(big)))).toBe(sha256(tree[big]!));
  });

  it('retries a 5xx and succeeds', async () => {
    world.proxy.inject((r) => r.url.startsWith('/download/'), { status: 503 }, 2);
    const result = await runCli(['download', '--data-dir', dest, paths[0]!], { env: world.env });
    expect(result.code).toBe(0);
    expect(world.proxy.seen('/download/')).toHaveLength(3);
    expect(result.stderr).toContain('server error 503');
  });

  it('gives up after the retries with exit status 1', async () => {
    world.proxy.inject((r) => r.url.startsWith('/store/'), { status: 500 }, 10);
    const result = await runCli(['download', '--retries', '1', '--data-dir', dest, paths[0]!], { env: world.env });
    expect(result.code).toBe(1);
    expect(transfers()).toHaveLength(2);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe('sdc download: 1 failed');
  });

  it('never retries a 4xx: a missing file fails at once, said in the command\'s terms', async () => {
    const missing = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240131_20240131_v09-09.cdf';
    const result = await runCli(['download', '--data-dir', dest, missing, paths[0]!], { env: world.env });
    expect(result.code).toBe(1);
    expect(world.proxy.seen(`/download/${missing}`)).toHaveLength(1);
    expect(result.stderr).toContain(`sdc download: ${missing}: not in the archive (the service has no file ${missing.slice(missing.lastIndexOf('/') + 1)}).`);
    expect(result.stderr).toContain('sdc download: 1 downloaded, 1 failed');
    expect(result.stdout).toBe(`${local(paths[0]!)}\n`);
  });

  it('makes no request for a name that breaks the naming rules', async () => {
    const result = await runCli(['download', '--data-dir', dest, 'imap_swe_l9_sci_20240105_20240105_v00-01.cdf'], { env: world.env });
    expect(result.code).toBe(1);
    expect(world.proxy.requests).toHaveLength(0);
    expect(result.stderr).toContain('Invalid data level. Valid data levels are: l0, l1, l1a');
  });

  it('leaves no partial file behind when nothing was received', async () => {
    await rm(dest, { recursive: true, force: true });
    world.proxy.inject((r) => r.url.startsWith('/store/'), { status: 403, body: 'expired' });
    const result = await runCli(['download', '--data-dir', dest, paths[0]!], { env: world.env });
    expect(result.code).toBe(1);
    expect(transfers()).toHaveLength(1);
    expect(result.stderr).toContain('expired');
    expect(existsSync(`${local(paths[0]!)}.part`)).toBe(false);
  });
});
