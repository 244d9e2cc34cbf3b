import { sql, type Kysely } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';

/*
 * `descriptor_days` (migration 0017): per (instrument, data level, start date, descriptor), the
 * archived files and the latest ones: what a count that names a descriptor sums instead of
 * reading the files (kept-counts-sql.ts; docs/performance.md "Counts that do not read the
 * files"). Its rows follow coverage_days: every writer, of this release or an earlier one,
 * recomputes a day it touched by deleting the day's coverage row and inserting it again
 * (product-refresh.ts, the one place), and triggers on coverage_days do the same for the day's
 * descriptor rows, in the same statement's transaction and under the same day locks. So the
 * table is as exact as coverage_days through a rolling upgrade too, with nothing to gate.
 *
 * The statements below are migration 0017's as it shipped: never edited (migrations.ts).
 */

const COLUMNS = 'instrument, data_level, start_date, descriptor, files, latest_files';
const AGGREGATES = 'files.instrument, files.data_level, files.start_date, files.descriptor, count(*), sum(files.is_latest)';
const GROUPS = 'files.instrument, files.data_level, files.start_date, files.descriptor';

/** Every day's descriptor rows from the archived files (the migration's fill). */
const FILL_DESCRIPTOR_DAYS_SQL = `INSERT INTO descriptor_days (${COLUMNS}) SELECT ${AGGREGATES} FROM files WHERE files.status IS NULL GROUP BY ${GROUPS}`;

/**
 * PostgreSQL: one trigger per statement, with the statement's rows as a transition table, so a
 * refresh of every day (a large load: DELETE FROM coverage_days, then one INSERT ... SELECT) is
 * one join, not a query per day.
 */
const POSTGRES_TRIGGERS = [
  'CREATE FUNCTION descriptor_days_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN' +
    ' DELETE FROM descriptor_days AS d USING removed AS r WHERE d.instrument = r.instrument AND d.data_level = r.data_level AND d.start_date = r.start_date;' +
    ' RETURN NULL; END $$',
  'CREATE TRIGGER coverage_days_removed AFTER DELETE ON coverage_days REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION descriptor_days_removed()',
  'CREATE FUNCTION descriptor_days_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN' +
    ` INSERT INTO descriptor_days (${COLUMNS}) SELECT ${AGGREGATES} FROM files JOIN added AS a` +
    ` ON files.instrument = a.instrument AND files.data_level = a.data_level AND files.start_date = a.start_date WHERE files.status IS NULL GROUP BY ${GROUPS};` +
    ' RETURN NULL; END $$',
  'CREATE TRIGGER coverage_days_added AFTER INSERT ON coverage_days REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION descriptor_days_added()',
];

/** SQLite: row triggers (it has no transition tables); a day's files are a range of files_search. */
const SQLITE_TRIGGERS = [
  'CREATE TRIGGER coverage_days_removed AFTER DELETE ON coverage_days BEGIN' +
    ' DELETE FROM descriptor_days WHERE instrument = OLD.instrument AND data_level = OLD.data_level AND start_date = OLD.start_date; END',
  `CREATE TRIGGER coverage_days_added AFTER INSERT ON coverage_days BEGIN INSERT INTO descriptor_days (${COLUMNS}) SELECT ${AGGREGATES} FROM files` +
    ` WHERE files.instrument = NEW.instrument AND files.data_level = NEW.data_level AND files.start_date = NEW.start_date AND files.status IS NULL GROUP BY ${GROUPS}; END`,
];

/**
 * Migration 0017: the table, its index by descriptor, the triggers, then the fill. The
 * triggers come first: creating them locks coverage_days against writers until the migration
 * commits, so a write whose files the fill does not see recomputes its days, and their
 * descriptor rows, after it.
 */
export async function createDescriptorDays(db: Kysely<unknown>, dialect: CatalogDialect): Promise<void> {
  await db.schema
    .createTable('descriptor_days')
    .addColumn('instrument', 'text', (c) => c.notNull())
    .addColumn('data_level', 'text', (c) => c.notNull())
    .addColumn('start_date', 'text', (c) => c.notNull())
    .addColumn('descriptor', 'text', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull())
    .addColumn('latest_files', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('descriptor_days_key', ['instrument', 'data_level', 'start_date', 'descriptor'])
    .execute();
  // A descriptor's days across instruments with their counts: an index-only sum.
  await db.schema.createIndex('descriptor_days_descriptor').on('descriptor_days').columns(['descriptor', 'instrument', 'data_level', 'start_date', 'files', 'latest_files']).execute();
  for (const statement of dialect.engine === 'postgres' ? POSTGRES_TRIGGERS : SQLITE_TRIGGERS) await sql.raw(statement).execute(db);
  await sql.raw(FILL_DESCRIPTOR_DAYS_SQL).execute(db);
}
