import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueryFilter, syntheticRecords, type Catalog, type FileRecord, type QueryOptions } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { rowsRemovedByFirstPage } from '../helpers/postgres-plans.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';

/*
 * A page in path order of one instrument (docs/scale.md, "one instrument"): PostgreSQL planned
 * it as a walk of the primary key from its start, testing every path of the instruments that
 * sort before it. The path rule puts an instrument's files in one range of paths
 * (src/mission/stored-path.ts), which the parsed filter now carries (filter-sql.ts,
 * pathRangeWhere). Here 45,000 files of every instrument and level; 33,750 sort before swe's.
 */

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const CASES = [
  { query: 'instrument=swe', sort: 'file_path' },
  { query: 'instrument=mag&data_level=l1a', sort: 'file_path' },
  // Descending: the walk starts at the last path and, before, read every instrument after mag's.
  { query: 'instrument=mag', sort: '-file_path' },
] as const;

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres: a page of one instrument in path order' : NO_DATABASE, () => {
  let schema: TestSchema;
  let catalog: Catalog;
  let records: FileRecord[];
  beforeAll(async () => {
    schema = testSchema();
    catalog = await openCatalog(schema.url);
    records = [...syntheticRecords(IMAP_MISSION, 45_000)];
    expect(await catalog.bulkLoad(records)).toBe(45_000);
  }, 120_000);
  afterAll(async () => {
    await catalog?.close();
    await schema?.drop();
  });

  it.each(CASES)('$query&sort=$sort walks its own paths only, and answers them in order', async ({ query, sort }) => {
    const parsed = parseQueryFilter(new URLSearchParams(`${query}&sort=${sort}&limit=11`), IMAP_MISSION);
    if (!parsed.ok) throw new Error(parsed.message);
    const { filter, options } = parsed;
    // Before: 33,750 (swe), 27,322 (mag l1a: every instrument before mag, and its l0 and l1), 15,000 (mag, descending).
    expect(await rowsRemovedByFirstPage(schema, filter, options)).toBeLessThan(1000);
    const paths = records
      .filter((r) => r.instrument === filter.instrument && (filter.data_level === undefined || r.data_level === filter.data_level))
      .map((r) => r.file_path)
      .sort(byPath);
    if (options.sort?.descending) paths.reverse();
    const page = async (after?: string) => {
      const out: string[] = [];
      const at: QueryOptions = { ...options, ...(after ? { after: { key: after, file_path: after } } : {}) };
      for await (const r of catalog.query(filter, at)) out.push(r.file_path);
      return out;
    };
    const first = await page();
    expect(first).toEqual(paths.slice(0, 11));
    expect(await page(first.at(-1))).toEqual(paths.slice(11, 22));
  });
});
