import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, withPathPrefix, type Catalog, type FileRecord } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { rowsRemovedByFirstPage } from '../helpers/postgres-plans.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';

/*
 * A page in path order of one product's days (src/catalog/few-matches-sql.ts): PostgreSQL
 * planned it as a walk of the primary key through every path that sorts before the product's
 * (docs/performance.md, "A large load leaves its tables all-visible"). Here 45,000 files sort
 * before a year of mag l2 that holds 5,110: the walk tested each of them.
 */

// With the path range a parsed filter carries (filter-sql.ts, pathRangeWhere): the gate's walk takes it, its sort does not.
const YEAR = withPathPrefix({ instrument: 'mag', data_level: 'l2', start_date: '20230101', end_date: '20231231' }, IMAP_MISSION);

/** 365 days of mag l2 in 2023, in 14 versions each; and 45,000 files of 2020-2021, of every product. */
function records(): { before: FileRecord[]; year: FileRecord[] } {
  const days = [...syntheticRecords(IMAP_MISSION, 84 * 365, 84 * 1096)].filter((r) => r.instrument === 'mag' && r.data_level === 'l2');
  const year: FileRecord[] = [];
  for (let v = 0; v < 14; v++) {
    const version = `v00-${String(v).padStart(2, '0')}`;
    for (const r of days) year.push({ ...r, version, file_path: r.file_path.replace('_v00-00.', `_${version}.`) });
  }
  return { before: [...syntheticRecords(IMAP_MISSION, 45_000)], year };
}

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres: a page of one product\'s days' : NO_DATABASE, () => {
  let schema: TestSchema;
  let catalog: Catalog;
  let year: FileRecord[];
  beforeAll(async () => {
    schema = testSchema();
    catalog = await openCatalog(schema.url);
    const loaded = records();
    year = loaded.year;
    expect(await catalog.bulkLoad([...loaded.before, ...loaded.year])).toBe(45_000 + 5110);
  }, 120_000);
  afterAll(async () => {
    await catalog?.close();
    await schema?.drop();
  });

  it('reads the year\'s files by its index, not every path before it, and answers them in path order', async () => {
    // Before: the walk of files_pkey removed the 45,000 paths that sort before the year's.
    expect(await rowsRemovedByFirstPage(schema, YEAR, { limit: 11 })).toBeLessThan(1000);
    const paths = year.map((r) => r.file_path).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page = async (after?: string) => {
      const out: string[] = [];
      for await (const r of catalog.query(YEAR, { limit: 11, ...(after ? { after: { key: after, file_path: after } } : {}) })) out.push(r.file_path);
      return out;
    };
    const first = await page();
    expect(first).toEqual(paths.slice(0, 11));
    expect(await page(first.at(-1))).toEqual(paths.slice(11, 22));
  });
});
