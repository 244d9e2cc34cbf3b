import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type FileRecord, type QueryFilter, type QueryOptions } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import type { RecordPages } from '../../src/catalog/record-pages.js';
import type { SqlCatalog } from '../../src/catalog/sql-catalog.js';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { CatalogModel } from './catalog-model.js';

/**
 * Each engine's reads (record by path, query pages and their JSON form, counts, paths) on a
 * catalog larger than a page and filled by its bulk paths answer exactly as the in-memory
 * model (catalog-model.ts), filter shape by filter shape.
 */
const backends: { name: string; skip: boolean; open: (dir: string) => Promise<{ catalog: SqlCatalog; dispose(): Promise<void> }> }[] = [
  { name: 'sqlite', skip: false, open: async (dir) => ({ catalog: await openSqliteCatalog(join(dir, 'catalog.db')), dispose: async () => undefined }) },
  {
    name: 'postgres',
    skip: !TEST_DATABASE_URL,
    open: async () => {
      const schema = testSchema();
      return { catalog: (await openCatalog(schema.url)) as SqlCatalog, dispose: () => schema.drop() };
    },
  },
];

describe.each(backends)('$name: reads = the model', ({ name, skip, open }) => {
  let dir: string;
  let catalog: SqlCatalog;
  let dispose: () => Promise<void>;
  const model = new CatalogModel();
  const collect = async (records: AsyncIterable<FileRecord>) => {
    const out: FileRecord[] = [];
    for await (const r of records) out.push(r);
    return out;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-prepared-'));
    if (skip) return;
    ({ catalog, dispose } = await open(dir));
    // Large enough for the bulk path that rebuilds the indexes after the load (REBUILD_AT).
    const records = [...syntheticRecords(IMAP_MISSION, 24_000)].reverse();
    records[7] = { ...records[7]!, uploader: 'swe-pipeline' };
    expect(await catalog.insertMany(records)).toBe(24_000);
    model.add(records);
    // Text that JSON must escape, as SQLite's json_object and JSON.stringify both do.
    records[9] = { ...records[9]!, descriptor: 'q"b\\n\n\t\r\b\f\u0001\u007f é 😀 \u2028', uploader: 'a"b\\' };
    const odd = { ...records[9]!, file_path: `${records[9]!.file_path}.odd` };
    await catalog.insert(odd);
    model.add([odd]);
    // Again, with some new: only the new ones are inserted, the others left as they are.
    const again = [...records.slice(0, 10), ...syntheticRecords(IMAP_MISSION, 5, 24_000)];
    expect(await catalog.insertMany(again)).toBe(5);
    model.add(again);
  });

  it.skipIf(name !== 'sqlite')('keeps every index through a bulk load', () => {
    const db = new Database(join(dir, 'catalog.db'), { readonly: true });
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' AND sql IS NOT NULL ORDER BY name").pluck().all() as string[]);
    db.close();
    expect(names).toEqual([
      'files_descriptor',
      'files_fixity_failed',
      'files_ingestion',
      'files_product_version',
      'files_public_descriptor',
      'files_public_path',
      'files_release_pending',
      'files_search',
      'files_start_date',
      'files_verified',
      'files_withdrawn',
    ]);
  });

  it.skipIf(name !== 'sqlite')('leaves the planner statistics after a bulk load, so "ingested since" plans by its value', () => {
    const db = new Database(join(dir, 'catalog.db'), { readonly: true });
    const rows = db.prepare("SELECT stat FROM sqlite_stat1 WHERE idx = 'sqlite_autoindex_files_1'").pluck().get() as string;
    const samples = db.prepare("SELECT count(*) FROM sqlite_stat4 WHERE tbl = 'files'").pluck().get() as number;
    const plan = (since: string) =>
      (db.prepare('EXPLAIN QUERY PLAN SELECT file_path FROM files WHERE ingestion_date >= ? ORDER BY file_path LIMIT 100').all(since) as { detail: string }[])
        .map((r) => r.detail)
        .join(' / ');
    // None ingested since: the ingestion index finds that at once; most: the path order does.
    const [none, most] = [plan('2026-01-01T00:00:00.000Z'), plan('2025-01-01T00:00:01.000Z')];
    db.close();
    expect(Number(rows.split(' ')[0])).toBe(24_000);
    expect(samples).toBeGreaterThan(0);
    expect(none).toContain('files_ingestion');
    expect(most).toContain('sqlite_autoindex_files_1');
  });
  afterAll(async () => {
    if (!skip) {
      await catalog.close();
      await dispose();
    }
    await rm(dir, { recursive: true, force: true });
  });

  const filters: QueryFilter[] = [
    {},
    { instrument: 'swe' },
    { instrument: 'swe', data_level: 'l1a', start_date: '20200110', end_date: '20200301' },
    { start_date: '20200110', end_date: '20200120', overlap: true },
    { end_date: '20200105', overlap: true },
    { descriptor: 'burst' },
    { version: 'latest' },
    { version: 'latest', instrument: 'mag' },
    { version: 'v00-01' },
    { version: '*', extension: 'pkts' },
    { ingestion_start_date: '2025-01-01T00:30:00.000Z', ingestion_end_date: '2025-01-01T01:00:00.000Z' },
    { file_path: 'imap/swe/l1a/2020/01/nothing.cdf' },
  ];
  const options: QueryOptions[] = [
    {},
    { limit: 3 },
    { limit: 1500 },
    { sort: { field: 'start_date', descending: true }, limit: 40 },
    { sort: { field: 'ingestion_date', descending: false } },
    { sort: { field: 'file_path', descending: true }, after: { key: 'imap/mag', file_path: 'imap/mag' } },
    { sort: { field: 'start_date', descending: false }, after: { key: '20200115', file_path: 'imap/swe' }, limit: 2500 },
  ];

  it.skipIf(skip)('gives the same records, in the same order, and the same counts', { timeout: 120_000 }, async () => {
    for (const filter of filters) {
      expect(await catalog.count(filter)).toBe(model.count(filter));
      for (const option of options) {
        const want = model.query(filter, option).map((r) => JSON.stringify(r));
        const got = (await collect(catalog.query(filter, option))).map((r) => JSON.stringify(r));
        expect(got, JSON.stringify({ filter, option })).toEqual(want);
        const pages = (catalog.query(filter, option) as RecordPages).jsonPages();
        if (pages) {
          const texts: string[] = [];
          for await (const page of pages) texts.push(...page);
          expect(texts).toEqual(want);
        }
      }
    }
    const first = (await collect(catalog.query({}, { limit: 10 })))[7]!;
    expect(await catalog.get(first.file_path)).toEqual(model.query({ file_path: first.file_path })[0]);
    expect(await catalog.get('imap/none')).toBeUndefined();
    const paths: string[] = [];
    for await (const path of catalog.paths()) paths.push(path);
    expect(paths).toEqual(model.query({}).map((r) => r.file_path));
    expect(paths.length).toBe(24_006);
  });

  it.skipIf(skip)('sees a write at once, and a revoked key is refused at once', async () => {
    const [record] = [...syntheticRecords(IMAP_MISSION, 1, 999_999)];
    expect(await catalog.get(record!.file_path)).toBeUndefined();
    await catalog.insert(record!);
    expect(await catalog.get(record!.file_path)).toEqual(record);
    const keys = catalog.keys();
    const { key } = await keys.create('k1');
    expect(await keys.check(key)).toEqual({ kind: 'valid', name: 'k1', role: 'uploader' });
    await keys.revoke('k1');
    expect((await keys.check(key)).kind).toBe('revoked');
    expect(await keys.check(`${key.slice(0, -1)}x`)).toEqual({ kind: 'invalid' });
    expect(await keys.anyExist()).toBe(true);
  });
});
