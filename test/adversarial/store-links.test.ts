import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/service/index.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const GENERATED_LINKS = scale(20, 200);
const SECRET = 'outside the store';

/** Every file under a folder, as relative paths. */
async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe('a symbolic link planted in the local store is never followed', () => {
  let server: TestServer;
  let outside: string;
  let run = 0;
  beforeAll(async () => {
    server = await startTestServer();
    outside = await mkdtemp(join(tmpdir(), 'sdc-outside-'));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(outside, { recursive: true, force: true });
  });

  it('reconcile reports it and indexes nothing, /download never serves it, an upload never writes through it', async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        // Where the link is: the year folder, the month folder, or the file itself; to a file, a folder or nothing.
        fc.constantFrom('year', 'month', 'file'),
        fc.boolean(),
        fc.constantFrom('v00-01', 'v01-02', 'v02-00'),
        async (at, dangling, version) => {
          const year = String(2030 + run++);
          const name = `imap_swe_l1a_sci_${year}0105_${year}0105_${version}.cdf`;
          const path = `imap/swe/l1a/${year}/01/${name}`;
          const store = join(server.home, 'store');
          const target = join(outside, `t${run}`);
          // What the link leads to: the same layout below it, holding bytes from outside.
          const below = at === 'year' ? `01/${name}` : at === 'month' ? name : '';
          if (!dangling) {
            await mkdir(join(target, below, '..'), { recursive: true });
            if (at === 'file') await writeFile(target, SECRET);
            else await writeFile(join(target, below), SECRET);
          }
          const linkAt = at === 'year' ? `imap/swe/l1a/${year}` : at === 'month' ? `imap/swe/l1a/${year}/01` : path;
          await mkdir(join(store, linkAt, '..'), { recursive: true });
          await symlink(target, join(store, linkAt));
          const before = await filesUnder(outside);

          const report = await reconcile(server.ctx);
          expect(report.refusedLinks).toBeGreaterThanOrEqual(1);
          refused = Math.max(refused, report.refusedLinks);
          expect(await server.ctx.catalog.has(path)).toBe(false);

          const download = await fetch(`${server.url}/download/${path}`);
          expect(download.status).toBe(404);
          expect(await download.text()).not.toContain(SECRET);

          const upload = await uploadFile(server.url, path, 'new bytes');
          expect(upload.status).toBe(409);
          expect(await filesUnder(outside)).toEqual(before);
          expect(await server.ctx.catalog.has(path)).toBe(false);
        },
      ),
      { numRuns: GENERATED_LINKS },
    );
    recordFigures('store-links', { links_planted: run, refused_by_last_reconcile: refused });
  }, 120_000);
});
