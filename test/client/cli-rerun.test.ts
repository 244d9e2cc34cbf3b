import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client, ContentConflictError } from '../../src/client/index.js';
import { freePort } from '../helpers/free-port.js';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree, sha256, useWorldWithData, writeTree } from './client-world.js';

describe('re-runs of sdc upload are idempotent; conflicts and a dead service have their own exit codes', { timeout: 180_000 }, () => {
  const tree = sampleTree();
  const paths = Object.keys(tree).sort();
  const ctx = useWorldWithData(tree);

  it('counts files archived with the same bytes as "already archived", exit 0', async () => {
    expect((await runCli(['upload', 'imap'], { cwd: ctx.dataDir, env: ctx.world.env })).code).toBe(0);
    const again = await runCli(['upload', 'imap'], { cwd: ctx.dataDir, env: ctx.world.env });
    expect(again.stderr).toContain(`sdc upload: ${paths.length} already archived`);
    expect(again.stderr).not.toContain('already exists');
    expect(again.code).toBe(0);
  });

  it('reports other bytes under an archived name as a conflict with both digests, exit 3', async () => {
    const changed = paths[0]!;
    const bytes = Buffer.from('other bytes');
    await writeFile(join(ctx.dataDir, ...changed.split('/')), bytes);
    const result = await runCli(['upload', 'imap'], { cwd: ctx.dataDir, env: ctx.world.env });
    expect(result.stderr).toContain(`${changed} is already archived with other bytes: archived SHA-256 ${sha256(tree[changed]!)}, local SHA-256 ${sha256(bytes)}`);
    expect(result.stderr).toContain(`sdc upload: ${paths.length - 1} already archived, 1 conflicting with the archive`);
    expect(result.code).toBe(3);
    await writeFile(join(ctx.dataDir, ...changed.split('/')), tree[changed]!);
  });

  it('the SDK answers a result for identical bytes and a ContentConflictError for others', async () => {
    const client = new Client({ url: ctx.world.url });
    try {
      const file = join(ctx.dataDir, ...paths[1]!.split('/'));
      expect(await client.upload(file, { dataDir: ctx.dataDir })).toMatchObject({ path: paths[1], status: 'already archived' });
      await writeFile(file, 'changed');
      const error = await client.upload(file, { dataDir: ctx.dataDir }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ContentConflictError);
      expect(error).toMatchObject({ code: 'Conflict', localSha256: sha256(Buffer.from('changed')), archivedSha256: sha256(tree[paths[1]!]!) });
      await writeFile(file, tree[paths[1]!]!);
    } finally {
      await client.close();
    }
  });

  it('says a missing file is missing, not outside the data directory', async () => {
    const result = await runCli(['upload', '--data-dir', ctx.dataDir, 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240107_20240107_v00-01.cdf'], {
      cwd: ctx.world.scratch,
      env: ctx.world.env,
    });
    expect(result.stderr).toContain('no such file: imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240107_20240107_v00-01.cdf');
    expect(result.stderr).not.toContain('outside the data directory');
    expect(result.code).toBe(1);
  });

  it('gives up on a service that does not answer, says so once, and exits 4', async () => {
    const many = await ctx.world.folder('many');
    const files: Record<string, Uint8Array> = {};
    for (let day = 10; day < 40; day++) {
      const ymd = `202401${String(day - 9).padStart(2, '0')}`;
      files[`imap/swe/l1a/2024/01/imap_swe_l1a_sci_${ymd}_${ymd}_v00-01.cdf`] = Buffer.from(ymd);
    }
    await writeTree(many, files);
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runCli(['upload', '--jobs', '4', 'imap'], { cwd: many, env: { IMAP_DATA_ACCESS_URL: url } });
    expect(result.stderr.match(/nothing answers at/g)).toHaveLength(1);
    expect(result.stderr).toMatch(/not tried \(service unreachable\)/);
    // Each worker retried a little, then the run stopped: far fewer lines than files times retries.
    expect(result.stderr.trim().split('\n').length).toBeLessThan(30);
    expect(result.code).toBe(4);
  });
});
