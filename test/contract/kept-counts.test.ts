import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type Catalog, type FileRecord, type QueryFilter } from '../../src/catalog/index.js';
import { numbered } from '../../src/catalog/filter-sql.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { countSql } from '../../src/catalog/record-reads.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';

/*
 * X-Total-Count of a descriptor and of "ingested since" (src/catalog/kept-counts-sql.ts): exact
 * against a count of the records themselves (withdrawn files, latest versions), on both
 * engines; and on PostgreSQL read from day rows, or from the files ingested before the
 * instant, never by reading every matching file (docs/performance.md "Counts that do not read
 * the files"). Before: a descriptor's count read every file of the descriptor, an "ingested
 * since" count every file ingested since.
 */

const ROUND = 12 * 7 * 3650; // syntheticRecords' records per descriptor (synthetic-records.ts)
/** 10,000 records of each descriptor at v00-00, then 10,000 sci at v00-01 (the same products as the first). Ingested one a second, in 5 bursts. */
const RECORDS: FileRecord[] = [0, 1, 2, 3, 4].flatMap((k) => [...syntheticRecords(IMAP_MISSION, 10_000, k * ROUND)]);
/** Every 97th record withdrawn: some of them the latest version of their product. */
const WITHDRAWN = new Set(RECORDS.filter((_, i) => i % 97 === 5).map((r) => r.file_path));

const instant = (i: number) => new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
/** Early in the span: 2,000 ingested before (the side read); late: 40,000 before, 10,000 since. */
const EARLY = instant(2000);
const LATE = instant(4 * ROUND);

/** The brute-force count: the archived records matching, with each product's highest archived version for `latest`. */
function bruteCount(filter: QueryFilter): number {
  const archived = RECORDS.filter((r) => !WITHDRAWN.has(r.file_path));
  const product = (r: FileRecord) => `${r.instrument}/${r.data_level}/${r.descriptor}/${r.start_date}`;
  const highest = new Map<string, string>();
  for (const r of archived) if ((highest.get(product(r)) ?? '') < r.version) highest.set(product(r), r.version);
  return archived.filter(
    (r) =>
      (filter.descriptor === undefined || r.descriptor === filter.descriptor) &&
      (filter.instrument === undefined || r.instrument === filter.instrument) &&
      (filter.ingestion_start_date === undefined || r.ingestion_date >= filter.ingestion_start_date) &&
      (filter.version !== 'latest' || highest.get(product(r)) === r.version),
  ).length;
}

const FILTERS: QueryFilter[] = [
  { descriptor: 'sci' },
  { descriptor: 'hk' },
  { descriptor: 'sci', version: 'latest' },
  { descriptor: 'burst', instrument: 'mag' },
  { ingestion_start_date: EARLY },
  { ingestion_start_date: LATE },
  { ingestion_start_date: EARLY, descriptor: 'sci', version: 'latest' },
  { ingestion_start_date: EARLY, instrument: 'swe' },
];

async function loaded(catalog: Catalog): Promise<void> {
  expect(await catalog.bulkLoad(RECORDS)).toBe(RECORDS.length);
  for (const path of WITHDRAWN) {
    expect((await catalog.withdraw(path, { withdrawn_date: '2025-02-01T00:00:00.000Z', withdrawn_reason: 'bad packets', withdrawn_by: 'curator-1' })).outcome).toBe('withdrawn');
  }
}

describe('sqlite: counts of a descriptor and of "ingested since"', () => {
  let home: string;
  let catalog: Catalog;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sdc-kept-counts-'));
    catalog = await openCatalog(`sqlite:${join(home, 'catalog.db')}`);
    await loaded(catalog);
  }, 120_000);
  afterAll(async () => {
    await catalog?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('equal a count of the records', async () => {
    for (const filter of FILTERS) expect(await catalog.count(filter), JSON.stringify(filter)).toBe(bruteCount(filter));
  });
});

/** A plan node of EXPLAIN (ANALYZE, FORMAT JSON) and every node under it. */
function nodes(node: Record<string, unknown>): Record<string, unknown>[] {
  return [node, ...((node.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(nodes)];
}

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres: counts of a descriptor and of "ingested since"' : NO_DATABASE, () => {
  let schema: TestSchema;
  let catalog: Catalog;
  let client: pg.Client;
  /** The rows each scan of `files` in the count's plan read (kept and removed), and whether any was a sequential scan. */
  const filesRead = async (filter: QueryFilter) => {
    const { text, params } = countSql(filter, true);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${numbered(text)}`, params);
    const scans = nodes(rows[0]!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name'] === 'files' && n['Actual Loops'] !== 0);
    const read = scans.reduce((sum, n) => sum + (Number(n['Actual Rows']) + Number(n['Rows Removed by Filter'] ?? 0) + Number(n['Rows Removed by Index Recheck'] ?? 0)) * Number(n['Actual Loops']), 0);
    return { read, seqScan: scans.some((n) => n['Node Type'] === 'Seq Scan') };
  };
  beforeAll(async () => {
    schema = testSchema();
    catalog = await openCatalog(schema.url);
    await loaded(catalog);
    client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
    await client.connect();
  }, 120_000);
  afterAll(async () => {
    await client?.end();
    await catalog?.close();
    await schema?.drop();
  });

  it('equal a count of the records', async () => {
    for (const filter of FILTERS) expect(await catalog.count(filter), JSON.stringify(filter)).toBe(bruteCount(filter));
  });

  it('read no file for a descriptor, and for "ingested since" early in the span only the files ingested before', async () => {
    for (const filter of FILTERS.filter((f) => f.ingestion_start_date === undefined)) {
      expect(await filesRead(filter), JSON.stringify(filter)).toEqual({ read: 0, seqScan: false });
    }
    // 48,000 files ingested since EARLY match; read: the 2,000 before it, the withdrawn files (files_withdrawn), the two ends of files_ingestion.
    const bound = 2000 + WITHDRAWN.size + 10;
    const early = await filesRead({ ingestion_start_date: EARLY });
    expect(early.seqScan).toBe(false);
    expect(early.read).toBeLessThan(bound);
    expect((await filesRead({ ingestion_start_date: EARLY, descriptor: 'sci', version: 'latest' })).read).toBeLessThan(bound);
  });
});
