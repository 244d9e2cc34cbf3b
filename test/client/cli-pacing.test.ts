// @module-tag slow (800 files paced under the default rate limit, over a minute: npm run test:all, test/README.md)
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startClientWorld, writeTree, type ClientWorld } from './client-world.js';

/** 800 small files, a day each: 2 files a day, v00-01, over 400 days from 2024-01-01. */
function bulkTree(count: number): Record<string, Uint8Array> {
  const tree: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 2) * 86_400_000);
    const ymd = day.toISOString().slice(0, 10).replace(/-/g, '');
    const descriptor = i % 2 === 0 ? 'sci' : 'hk';
    tree[`imap/swe/l1a/${ymd.slice(0, 4)}/${ymd.slice(4, 6)}/imap_swe_l1a_${descriptor}_${ymd}_${ymd}_v00-01.cdf`] = Buffer.from(`file ${i}\n`);
  }
  return tree;
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).length;
}

/**
 * The issue this answers: `sdc upload --jobs 8` of 800 files failed a quarter of them on the
 * server's own default rate limit (1200 requests a minute), and download --query failed
 * nearly all. Both runs here go under that default limit, one after the other in the same
 * minute (1600 API requests in all), so the client must pace itself to succeed.
 */
describe('sdc upload and download of 800 files with --jobs 8 under the default rate limit', { timeout: 600_000 }, () => {
  let world: ClientWorld;
  let dataDir: string;
  const files = 800;

  beforeAll(async () => {
    world = await startClientWorld();
    dataDir = await world.folder('data');
    await writeTree(dataDir, bulkTree(files));
  });
  afterAll(() => world.stop());

  it('uploads every file (exit 0)', async () => {
    const result = await runCli(['upload', '--jobs', '8', 'imap'], { cwd: dataDir, env: world.env });
    expect(result.stderr).toContain(`sdc upload: ${files} uploaded`);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(files);
  });

  it('downloads every file a query matches, pausing all workers while the budget is spent', async () => {
    const dest = await world.folder('mirror');
    const result = await runCli(['download', '--query', '--instrument', 'swe', '--jobs', '8', '--data-dir', dest], { env: world.env });
    expect(result.stderr).toContain(`sdc download: ${files} downloaded`);
    expect(result.code).toBe(0);
    expect(await countFiles(dest)).toBe(files);
    // Upload and download together spent more than a minute's budget: the client said it waited.
    expect(result.stderr).toMatch(/all requests wait \d+ s, then go on/);
    expect(result.stderr).not.toContain('failed');
  });
});
