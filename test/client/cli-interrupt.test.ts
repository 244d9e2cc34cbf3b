import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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

// Ctrl-C in the middle of an upload in parts: part 1 stored, part 2 held by the proxy.
describe('sdc upload interrupted by Ctrl-C', { timeout: 180_000 }, () => {
  let world: ClientWorld;
  const path = 'imap/swe/l1b/2024/02/imap_swe_l1b_sci_20240201_20240201_v00-01.cdf';
  const bytes = randomBytes(33 * 1024 * 1024);

  beforeAll(async () => {
    world = await startClientWorld();
  });
  afterAll(() => world?.stop());

  it('says how far it got, what was kept and how to go on, exits 130; the same command then says it resumes', async () => {
    const data = await world.folder('upload');
    await writeTree(data, { [path]: bytes });
    const file = join(data, ...path.split('/'));
    const state = join(dirname(file), `.${basename(file)}.sdc-upload.json`);
    // Part 2 never reaches the server (answered 503 by the proxy, retried by the client): held
    // whatever the timing. (A stalled answer still forwarded its body, which the server could
    // store before the Ctrl-C.)
    world.proxy.inject((r) => r.method === 'PUT' && r.url.includes('partNumber=2'), { status: 503 }, Infinity);
    const cli = startCli(['upload', '--part-threshold', '16', '--parts', '1', path], { cwd: data, env: world.env });
    await expect.poll(() => world.proxy.seen('/store/', 'PUT').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    expect(await cli.stop('SIGINT')).toBe(130);
    const stderr = cli.stderrLines.join('\n');
    expect(stderr).toContain('sdc upload: interrupted after 0 of 1 file.');
    expect(stderr).toContain(`Kept for resuming: the stored parts of an upload in parts, recorded in\n  ${state}`);
    expect(stderr).toContain('Run the same command again to go on');

    world.proxy.reset();
    const again = await runCli(['upload', '--part-threshold', '16', '--parts', '1', path], { cwd: data, env: world.env });
    expect(again.stderr).toContain(`sdc upload: ${path}: resuming an interrupted upload, 1 of 3 parts already stored`);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('1 uploaded');
  });
});
