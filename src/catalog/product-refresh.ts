import { archivedSql } from './archived-sql.js';

/*
 * What the catalog keeps up to date at ingest so that `version=latest` and GET /coverage cost
 * the answer, not the archive (docs/performance.md, "latest and coverage kept at ingest"):
 *
 * - `files.is_latest`: 1 when no file of the same product (instrument, data level, descriptor,
 *   start date) has a higher version, else 0. `version=latest` is then `is_latest = 1`.
 * - `coverage_days`: per (instrument, data level, start date), the files, their total size and
 *   latest end date, for all versions and for the latest ones alone: what /coverage merges
 *   into spans when its filter needs nothing else (coverage-sql.ts). Triggers keep each day's
 *   rows of `descriptor_days` with it (descriptor-days.ts).
 *
 * THE ONE PLACE both are recomputed. Every write of the files table runs these statements for
 * the products and days it touched, in the same transaction as the write (the SQLite and
 * PostgreSQL inserts and bulk loads, the migration's backfill). Anything that later changes
 * which version of a product counts (withdrawing a file, SqlCatalog.withdraw) runs them for
 * that product and its day. Statements use `?` placeholders (PostgreSQL's callers number them
 * with filter-sql.ts's numbered()).
 *
 * Withdrawn files (status 'withdrawn', docs/api.md "Withdrawn files") count for neither: a
 * withdrawn version is never latest (the highest archived version is), and coverage_days
 * holds the archived files only (a coverage that asks for withdrawn files groups the files).
 */

/** A product: the files that are versions of one another. */
export interface ProductKey {
  readonly instrument: string;
  readonly data_level: string;
  readonly descriptor: string;
  readonly start_date: string;
}

/**
 * Whether a row's flag is wrong, given `m.v`, its product's highest archived version (NULL when
 * every version is withdrawn). Versions are vXX-YY: text order is numeric order.
 */
const FLAG_IS_WRONG = `files.is_latest <> CASE WHEN files.version = m.v AND ${archivedSql('files')} THEN 1 ELSE 0 END`;
/** A product's highest archived version: withdrawn files are grouped with it but never counted. */
const MAX_ARCHIVED_VERSION = `max(CASE WHEN ${archivedSql()} THEN version END)`;

/** Recomputes the latest flag of one product's files: params instrument, data_level, descriptor, start_date. Rows already right are not written. */
export const REFRESH_PRODUCT_SQL =
  `UPDATE files SET is_latest = 1 - is_latest FROM (SELECT ${MAX_ARCHIVED_VERSION} AS v FROM files` +
  ' WHERE instrument = ? AND data_level = ? AND descriptor = ? AND start_date = ?) AS m' +
  ` WHERE files.instrument = ? AND files.data_level = ? AND files.descriptor = ? AND files.start_date = ? AND ${FLAG_IS_WRONG}`;

export function refreshProductParams(p: ProductKey): string[] {
  const key = [p.instrument, p.data_level, p.descriptor, p.start_date];
  return [...key, ...key];
}

/** The aggregate columns of coverage_days, computed from the files (of a day, or of all) as `files`. */
const DAY_AGGREGATES =
  'files.instrument, files.data_level, files.start_date, count(*), sum(files.size), max(files.end_date),' +
  ' sum(files.is_latest), sum(files.is_latest * files.size), max(CASE WHEN files.is_latest = 1 THEN files.end_date END)';
const DAY_COLUMNS = 'instrument, data_level, start_date, files, size, end_date, latest_files, latest_size, latest_end_date';

/** Recomputes one day's coverage row (after its products' flags): two statements, params instrument, data_level, start_date each. */
export const REFRESH_DAY_SQL = [
  'DELETE FROM coverage_days WHERE instrument = ? AND data_level = ? AND start_date = ?',
  `INSERT INTO coverage_days (${DAY_COLUMNS}) SELECT ${DAY_AGGREGATES} FROM files` +
    ` WHERE files.instrument = ? AND files.data_level = ? AND files.start_date = ? AND ${archivedSql('files')} GROUP BY files.instrument, files.data_level, files.start_date`,
] as const;

/** Every day's row recomputed from the files, whose flags are right: the end of a large load whose rows went in flagged (stagedWithFlagsSql). */
export const REFRESH_ALL_DAYS_SQL = [
  'DELETE FROM coverage_days',
  `INSERT INTO coverage_days (${DAY_COLUMNS}) SELECT ${DAY_AGGREGATES} FROM files WHERE ${archivedSql('files')} GROUP BY files.instrument, files.data_level, files.start_date`,
] as const;

/** Every product's flag and every day's row recomputed: a bulk load larger than the table, the migration's backfill. */
export const REFRESH_ALL_SQL = [
  `UPDATE files SET is_latest = 1 - is_latest FROM (SELECT instrument AS i, data_level AS l, descriptor AS d, start_date AS s, ${MAX_ARCHIVED_VERSION} AS v` +
    ' FROM files GROUP BY instrument, data_level, descriptor, start_date) AS m' +
    ` WHERE files.instrument = m.i AND files.data_level = m.l AND files.descriptor = m.d AND files.start_date = m.s AND ${FLAG_IS_WRONG}`,
  ...REFRESH_ALL_DAYS_SQL,
] as const;

const PRODUCT_COLUMNS = 'instrument, data_level, descriptor, start_date';

/**
 * PostgreSQL: the rows of a staging table (alias `s`: its `columns`, then is_latest) with each
 * flag computed by the rule above as they go into the files table, over the product's
 * versions among the staged rows and the table's: a large load writes each row once instead of
 * updating most of what it has just inserted (postgres-large-load.ts). A hash join with each
 * product's highest archived version, which one aggregate of the two computes.
 */
export function stagedWithFlagsSql(staged: string, columns: readonly string[]): string {
  const versions = `SELECT ${PRODUCT_COLUMNS}, version, status FROM ${staged} UNION ALL SELECT ${PRODUCT_COLUMNS}, version, status FROM files`;
  return (
    `SELECT ${columns.map((c) => `s.${c}`).join(', ')}, CASE WHEN s.version = m.v AND ${archivedSql('s')} THEN 1 ELSE 0 END` +
    ` FROM ${staged} AS s JOIN (SELECT ${PRODUCT_COLUMNS}, ${MAX_ARCHIVED_VERSION} AS v FROM (${versions}) AS a GROUP BY ${PRODUCT_COLUMNS}) AS m` +
    ' ON s.instrument = m.instrument AND s.data_level = m.data_level AND s.descriptor = m.descriptor AND s.start_date = m.start_date'
  );
}

/**
 * REFRESH_ALL_SQL as migration 0008 ran it, before files had a status (migration 0011): a
 * shipped migration's statements never change (src/catalog/migrations.ts).
 */
export const REFRESH_ALL_BEFORE_STATUS_SQL = [
  'UPDATE files SET is_latest = 1 - is_latest FROM (SELECT instrument AS i, data_level AS l, descriptor AS d, start_date AS s, max(version) AS v' +
    ' FROM files GROUP BY instrument, data_level, descriptor, start_date) AS m' +
    ' WHERE files.instrument = m.i AND files.data_level = m.l AND files.descriptor = m.d AND files.start_date = m.s' +
    ' AND files.is_latest <> CASE WHEN files.version = m.v THEN 1 ELSE 0 END',
  'DELETE FROM coverage_days',
  `INSERT INTO coverage_days (${DAY_COLUMNS}) SELECT ${DAY_AGGREGATES} FROM files GROUP BY files.instrument, files.data_level, files.start_date`,
] as const;

/**
 * PostgreSQL, many products at once ($1..$4: text arrays of instrument, data_level, descriptor,
 * start_date, one element per product), after a lock (postgresRefreshSql). Under READ
 * COMMITTED each statement after the lock sees every other writer's files of those days
 * committed: two uploads of versions of one product at once cannot both stay flagged latest.
 */
const PRODUCTS = 'SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(i, l, d, s)';
// Every statement names all four arrays, so that PostgreSQL knows each parameter's type.
const DAYS = 'SELECT DISTINCT i, l, s FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(i, l, d, s)';
const POSTGRES_REFRESH_PRODUCTS_SQL = [
  `UPDATE files SET is_latest = 1 - is_latest FROM (SELECT f.instrument AS i, f.data_level AS l, f.descriptor AS d, f.start_date AS s, max(CASE WHEN ${archivedSql('f')} THEN f.version END) AS v` +
    ` FROM files AS f JOIN (${PRODUCTS}) AS p ON f.instrument = p.i AND f.data_level = p.l AND f.descriptor = p.d AND f.start_date = p.s` +
    ' GROUP BY f.instrument, f.data_level, f.descriptor, f.start_date) AS m' +
    ` WHERE files.instrument = m.i AND files.data_level = m.l AND files.descriptor = m.d AND files.start_date = m.s AND ${FLAG_IS_WRONG}`,
  `DELETE FROM coverage_days AS c USING (${DAYS}) AS d WHERE c.instrument = d.i AND c.data_level = d.l AND c.start_date = d.s`,
  `INSERT INTO coverage_days (${DAY_COLUMNS}) SELECT ${DAY_AGGREGATES} FROM files JOIN (${DAYS}) AS d` +
    ` ON files.instrument = d.i AND files.data_level = d.l AND files.start_date = d.s WHERE ${archivedSql('files')} GROUP BY files.instrument, files.data_level, files.start_date`,
] as const;

/**
 * The advisory lock key that every refresh holds (shared by a few days' refresh, alone by a large
 * one). Advisory locks are one set for the whole database, so the key names the schema: a large
 * load in another deployment's schema on the same server is no reason to wait.
 */
const ALL_DAYS_LOCK = "hashtextextended('sdc-data-access coverage_days ' || current_schema(), 0)";

/**
 * The key 0.1.0 used for ALL_DAYS_LOCK, one for the whole database, taken here shared by every
 * refresh: a 0.1.0 instance's large refresh (exclusive) still waits for ours and ours for it
 * during a rolling upgrade, while shared holds never wait on each other. Not excluded: a 0.1.0
 * instance's refresh of a few days beside our large one (docs/deploy.md, "The runbook").
 */
const OLD_ALL_DAYS_LOCK = "hashtextextended('sdc-data-access coverage_days', 0)";

/**
 * A few days are locked each for the transaction (in one order, so two writers never wait on
 * each other in a cycle), beside a shared hold of ALL_DAYS_LOCK; more than this many take
 * ALL_DAYS_LOCK alone, exclusively: each lock is a slot of PostgreSQL's shared lock table
 * (64 per connection by default), which a load's thousands of days would exhaust.
 */
const DAY_LOCKS_AT_MOST = 32;

/** The statements of a PostgreSQL refresh of some products (productArrays), lock first; $1..$4 bound to the arrays. */
export function postgresRefreshSql(arrays: readonly string[][]): string[] {
  const days = new Set(arrays[0]!.map((instrument, i) => `${instrument}/${arrays[1]![i]}/${arrays[3]![i]}`)).size;
  const lock =
    days <= DAY_LOCKS_AT_MOST
      ? `SELECT pg_advisory_xact_lock_shared(${ALL_DAYS_LOCK}), pg_advisory_xact_lock_shared(${OLD_ALL_DAYS_LOCK}), pg_advisory_xact_lock(k)` +
        ` FROM (SELECT DISTINCT hashtextextended(i || '/' || l || '/' || s, 0) AS k FROM (${DAYS}) AS days) AS keys ORDER BY k`
      : `SELECT pg_advisory_xact_lock(${ALL_DAYS_LOCK}), pg_advisory_xact_lock_shared(${OLD_ALL_DAYS_LOCK}) FROM (SELECT count(*) FROM (${PRODUCTS}) AS p) AS n`;
  return [lock, ...POSTGRES_REFRESH_PRODUCTS_SQL];
}

const ALL_DAYS_LOCKED = `SELECT pg_advisory_xact_lock(${ALL_DAYS_LOCK}), pg_advisory_xact_lock_shared(${OLD_ALL_DAYS_LOCK})`;

/** PostgreSQL's whole-table refresh (a load larger than the table), after ALL_DAYS_LOCK. */
export const POSTGRES_REFRESH_ALL_SQL = [ALL_DAYS_LOCKED, ...REFRESH_ALL_SQL];

/** PostgreSQL's refresh of every day's row alone (the flags went in right), after ALL_DAYS_LOCK. */
export const POSTGRES_REFRESH_ALL_DAYS_SQL = [ALL_DAYS_LOCKED, ...REFRESH_ALL_DAYS_SQL];

/** The arrays postgresRefreshSql's statements take, from the records (or products) written. */
export function productArrays(records: readonly ProductKey[]): string[][] {
  const columns: string[][] = [[], [], [], []];
  for (const p of distinctProducts(records)) {
    columns[0]!.push(p.instrument);
    columns[1]!.push(p.data_level);
    columns[2]!.push(p.descriptor);
    columns[3]!.push(p.start_date);
  }
  return columns;
}

/** The products of some records (or products), each once. */
export function distinctProducts(records: readonly ProductKey[]): ProductKey[] {
  const seen = new Map<string, ProductKey>();
  for (const r of records) {
    const key = `${r.instrument}\u0000${r.data_level}\u0000${r.descriptor}\u0000${r.start_date}`;
    if (!seen.has(key)) seen.set(key, { instrument: r.instrument, data_level: r.data_level, descriptor: r.descriptor, start_date: r.start_date });
  }
  return [...seen.values()];
}

/** The days (instrument, data_level, start_date) of some products, each once, as parameter lists. */
export function distinctDays(products: readonly ProductKey[]): [string, string, string][] {
  const seen = new Map<string, [string, string, string]>();
  for (const p of products) seen.set(`${p.instrument}\u0000${p.data_level}\u0000${p.start_date}`, [p.instrument, p.data_level, p.start_date]);
  return [...seen.values()];
}

/**
 * The statements (SQL, params) that bring some products' flags and their days' rows up to
 * date one product and one day at a time: SQLite's writes and the shared single insert.
 */
export function refreshStatements(products: readonly ProductKey[]): { text: string; params: string[] }[] {
  const out = products.map((p) => ({ text: REFRESH_PRODUCT_SQL, params: refreshProductParams(p) }));
  for (const day of distinctDays(products)) for (const text of REFRESH_DAY_SQL) out.push({ text, params: day });
  return out;
}
