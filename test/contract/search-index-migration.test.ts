import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { undoAfter0010 } from '../helpers/undo-migrations.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type Catalog, type CoverageDay, type FileRecord, type QueryFilter } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { SqlCatalog } from '../../src/catalog/sql-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';
import { catalogModel } from '../helpers/catalog-model.js';
import { TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { withSqliteFile } from '../helpers/sqlite-file.js';

/**
 * Migration 0007 on a catalog that already holds records: on SQLite the search index
 * (instrument, data_level, start_date) is replaced by files_search, which holds every column;
 * on PostgreSQL the indexes stay as they were. The answers stay those the records call for.
 */

/** Records i of the synthetic series with the same products and days again every `ROUND` records. */
const ROUND = 12 * 7 * 3650;
const records: FileRecord[] = [
  ...syntheticRecords(IMAP_MISSION, 3000), // sci v00-00
  ...syntheticRecords(IMAP_MISSION, 3000, ROUND), // burst v00-00
  ...syntheticRecords(IMAP_MISSION, 2000, 4 * ROUND), // sci v00-01 of the first 2000
  ...syntheticRecords(IMAP_MISSION, 700, 8 * ROUND), // sci v00-02 of the first 700
].map((r, i) => (i % 5 === 0 ? { ...r, uploader: 'swe-pipeline' } : r));

/** What a filter of these shapes must answer, from the records themselves. */
const model = catalogModel(records);

const filters: QueryFilter[] = [
  { instrument: 'swe', data_level: 'l0', start_date: '20200101', end_date: '20200128' },
  { instrument: 'ultra-45', data_level: 'l1', start_date: '20200105', end_date: '20200220' },
  { instrument: 'mag', data_level: 'l0' },
  { version: 'latest', instrument: 'swe', data_level: 'l0', start_date: '20200101', end_date: '20200128' },
  { version: 'latest', instrument: 'hit', data_level: 'l1a', descriptor: 'sci' },
  { version: 'latest', instrument: 'hit' },
  { version: 'latest' },
  {},
];

/** Statements run through the engine's own client (to put a catalog back as it was before 0007). */
type Run = (sql: string[]) => Promise<void>;

const backends: { name: string; skip: boolean; open(dir: string): Promise<{ url: string; run: Run; indexes(): Promise<string[]>; dispose(): Promise<void> }> }[] = [
  {
    name: 'sqlite',
    skip: false,
    open: async (dir) => {
      const file = join(dir, 'catalog.db');
      const onFile = <T>(use: (db: Database.Database) => T) => withSqliteFile(file, use);
      return {
        url: `sqlite:${file}`,
        run: async (statements) => onFile((db) => statements.forEach((s) => db.exec(s))),
        indexes: async () =>
          onFile((db) => db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' AND sql IS NOT NULL ORDER BY name").pluck().all() as string[]),
        dispose: async () => undefined,
      };
    },
  },
  {
    name: 'postgres',
    skip: !TEST_DATABASE_URL,
    open: async () => {
      const schema = testSchema();
      const onSchema = async <T>(use: (client: pg.Client) => Promise<T>) => {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          await client.query(`set search_path to "${schema.schema}"`);
          return await use(client);
        } finally {
          await client.end();
        }
      };
      return {
        url: schema.url,
        run: (statements) =>
          onSchema(async (client) => {
            for (const s of statements) await client.query(s);
          }),
        indexes: () =>
          onSchema(async (client) => {
            const { rows } = await client.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname', [
              schema.schema,
              'files',
            ]);
            return rows.map((r) => r.indexdef.replace(` ON "${schema.schema}".files`, ' ON files').replace(` ON ${schema.schema}.files`, ' ON files'));
          }),
        dispose: () => schema.drop(),
      };
    },
  },
];

describe.each(backends)('$name: migrations 0007 (files_search) and 0008 (latest flags, coverage rows) on a catalog with records', ({ name, skip, open }) => {
  let dir: string;
  let subject: Awaited<ReturnType<(typeof backends)[number]['open']>>;
  let catalog: Catalog;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-search-index-'));
    if (skip) return;
    subject = await open(dir);
    const first = await openCatalog(subject.url);
    expect(await first.insertMany(records)).toBe(records.length);
    await first.close();
    // Back to the schema of 0006, with planner statistics as a catalog of that time has them;
    // 0008 (latest flags and coverage rows) then fills them from these records again.
    // 0009 (key generations) and 0010 (key roles) ran after them: they are undone too (api_keys
    // as 0004 made it), so the migrations run again in order.
    await subject.run([
      // 0011 (the lifecycle's columns, the change log) ran after them too: undone first.
      ...undoAfter0010(name === 'sqlite' ? 'sqlite' : 'postgres'),
      "DELETE FROM kysely_migration WHERE name = '0010-api-key-roles'",
      'CREATE TABLE api_keys_old (key_id text PRIMARY KEY, name text NOT NULL UNIQUE, key_hash text NOT NULL, created_at text NOT NULL, revoked_at text)',
      'DROP TABLE api_keys',
      'ALTER TABLE api_keys_old RENAME TO api_keys',
      "DELETE FROM kysely_migration WHERE name = '0009-api-key-generations'",
      'DROP TABLE coverage_days',
      'ALTER TABLE files DROP COLUMN is_latest',
      "DELETE FROM kysely_migration WHERE name = '0008-latest-flag-and-coverage-days'",
      ...(name === 'sqlite' ? ['DROP INDEX files_search', 'CREATE INDEX files_instrument_level_start ON files (instrument, data_level, start_date)'] : []),
      "DELETE FROM kysely_migration WHERE name = '0007-covering-search-index'",
      'ANALYZE files',
    ]);
    catalog = await openCatalog(subject.url);
  });

  afterAll(async () => {
    if (!skip) {
      await catalog.close();
      await subject.dispose();
    }
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('leaves files_search in place of files_instrument_level_start on SQLite, the indexes as they were on PostgreSQL', async () => {
    const indexes = await subject.indexes();
    if (name === 'sqlite') {
      expect(indexes).toEqual([
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
    } else {
      expect(indexes).toEqual([
        'CREATE INDEX files_descriptor ON files USING btree (descriptor, file_path)',
        "CREATE INDEX files_fixity_failed ON files USING btree (file_path) WHERE (fixity = ANY (ARRAY['mismatch'::text, 'missing'::text]))",
        'CREATE INDEX files_ingestion ON files USING btree (ingestion_date, file_path)',
        'CREATE INDEX files_instrument_level_start ON files USING btree (instrument, data_level, start_date)',
        'CREATE UNIQUE INDEX files_pkey ON files USING btree (file_path)',
        'CREATE INDEX files_product_version ON files USING btree (instrument, data_level, descriptor, start_date, version)',
        'CREATE INDEX files_public_descriptor ON files USING btree (descriptor, file_path, release_date) WHERE ((status IS NULL) AND (release_date IS NOT NULL))',
        'CREATE INDEX files_public_path ON files USING btree (file_path, release_date) WHERE ((status IS NULL) AND (release_date IS NOT NULL))',
        'CREATE INDEX files_release_date ON files USING btree (release_date, file_path)',
        'CREATE INDEX files_release_pending ON files USING btree (release_date) WHERE (release_logged IS NULL)',
        'CREATE INDEX files_start_date ON files USING btree (start_date)',
        'CREATE INDEX files_verified ON files USING btree (verified_date, file_path)',
        "CREATE INDEX files_withdrawn ON files USING btree (file_path) WHERE (status = 'withdrawn'::text)",
      ]);
    }
  });

  it.skipIf(skip)('answers what the records call for: queries, counts, coverage', async () => {
    for (const filter of filters) {
      const want = model.matching(filter);
      expect(want.length, JSON.stringify(filter)).toBeGreaterThan(0);
      const got: FileRecord[] = [];
      for await (const r of catalog.query(filter)) got.push(r);
      // Migration 0012: every file stored before it is public since its ingestion.
      expect(got, JSON.stringify(filter)).toEqual(want.map((r) => ({ ...r, release_date: r.ingestion_date })));
      expect(await catalog.count(filter)).toBe(want.length);
      const days: CoverageDay[] = [];
      for await (const day of catalog.coverage(filter)) days.push(day);
      expect(days, JSON.stringify(filter)).toEqual(model.coverage(filter));
    }
  });

  it.skipIf(name !== 'sqlite')('reads the search from files_search alone, with its statistics', async () => {
    const plan = (await (catalog as SqlCatalog).explain(filters[0]!)).join(' / ');
    expect(plan).toContain('COVERING INDEX files_search');
    const db = new Database(join(dir, 'catalog.db'), { readonly: true });
    const stat = db.prepare("SELECT stat FROM sqlite_stat1 WHERE idx = 'files_search'").pluck().get() as string | undefined;
    db.close();
    expect(Number(stat?.split(' ')[0])).toBe(records.length);
  });
});
