import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { download, upload } from '../../../src/service/index.js';
import { makeTestContext, type TestContext } from '../../helpers/service-context.js';

// An upload's and a download's check read only the record's columns they decide on
// (docs/performance.md, "Per-request cost on both engines"): each column read costs the driver
// on every request. The whole record is read only to word a withdrawn or damaged file's refusal.

const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const NEXT = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-02.cdf';

let t: TestContext;
beforeEach(async () => {
  t = await makeTestContext();
});
afterEach(async () => {
  await t.dispose();
});

/** The catalog's reads of one path during `run`: the whole record (get), or some fields (getFields). */
async function readsOf(run: () => Promise<unknown>): Promise<string[]> {
  const reads: string[] = [];
  const catalog = t.ctx.catalog;
  const get = catalog.get.bind(catalog);
  const getFields = catalog.getFields?.bind(catalog);
  vi.spyOn(catalog, 'get').mockImplementation((path) => (reads.push('whole record'), get(path)));
  if (getFields) vi.spyOn(catalog, 'getFields').mockImplementation((path, fields) => (reads.push(fields.join(',')), getFields(path, fields)));
  await run();
  vi.restoreAllMocks();
  return reads;
}

describe('the record columns an upload and a download read', () => {
  it('upload: the status alone, for a free name and for a stored one (409)', async () => {
    expect(await readsOf(async () => expect((await upload(t.ctx, PATH)).statusCode).toBe(200))).toEqual(['status']);
    await t.put(PATH, 'x');
    expect(await readsOf(async () => expect((await upload(t.ctx, PATH)).statusCode).toBe(409))).toEqual(['status']);
  });

  it('download of a served file: status, release date and fixity, not the whole record', async () => {
    await t.put(PATH, 'x');
    expect(await readsOf(async () => expect((await download(t.ctx, PATH)).statusCode).toBe(302))).toEqual(['status,release_date,fixity']);
  });

  it('download of a withdrawn file: those three, then the whole record for the 410 text and its successor', async () => {
    await t.put(PATH, 'x');
    await t.put(NEXT, 'y');
    await t.ctx.catalog.withdraw(PATH, { withdrawn_date: '2026-01-02T03:04:05Z', withdrawn_reason: 'bad calibration', withdrawn_by: 'curator', superseded_by: NEXT });
    let answer: Awaited<ReturnType<typeof download>> | undefined;
    expect(await readsOf(async () => (answer = await download(t.ctx, PATH)))).toEqual(['status,release_date,fixity', 'whole record']);
    expect(answer!.statusCode).toBe(410);
    expect(answer!.headers?.Link).toBe(`</download/${NEXT}>; rel="successor-version"`);
    expect(JSON.stringify(answer!.body)).toContain('bad calibration');
  });

  it('the catalog answers only the fields asked for, absent ones left out as in get', async () => {
    await t.put(PATH, 'x');
    const record = (await t.ctx.catalog.get(PATH))!;
    expect(await t.ctx.catalog.getFields(PATH, ['status', 'release_date', 'fixity'])).toEqual({ release_date: record.release_date });
    expect(await t.ctx.catalog.getFields(PATH, ['size', 'sha256'])).toEqual({ size: record.size, sha256: record.sha256 });
    expect(await t.ctx.catalog.getFields(NEXT, ['status'])).toBeUndefined();
  });
});
