import { CHANGE_LOG_LOCK, changeTime, createdAudienceOfJson, retractedFromSql, type NewChange } from '../change-log.js';
import { postgresJsonRecord } from './postgres-json-record.js';
import { inOneRoundTrip } from './one-round-trip.js';
import type { Refresh, RetractedRows, SqlStatement } from '../post-write.js';
import { POSTGRES_REFRESH_ALL_DAYS_SQL, POSTGRES_REFRESH_ALL_SQL, postgresRefreshSql, productArrays } from '../product-refresh.js';

/*
 * The change log's ids are taken at commit (change-log.ts): a writing transaction notes its
 * entries in `changes_pending`, with its transaction id, and a row in `changes_commits`, whose
 * deferred trigger runs inside the COMMIT: it takes the log's advisory lock, then moves the
 * transaction's entries into `changes` in the order they were noted. Both tables are unlogged
 * (no WAL: their rows live only inside the writing transaction, which a crash rolls back
 * anyway) and are empty outside a writing transaction. An earlier release's writer, which
 * appends to `changes` itself under the same lock, keeps the same order beside them (a rolling
 * upgrade, docs/deploy.md).
 */

/** The key of the log's lock of the schema the session's search_path names (change-log.ts). */
export const SCHEMA_CHANGE_LOCK_KEY = "hashtextextended('sdc-data-access changes ' || current_schema(), 0)";

/** Migration 0015's statements (migrations.ts): the two tables, the function and its trigger. Never change: a shipped migration. */
export const CHANGES_AT_COMMIT_SCHEMA = [
  `CREATE UNLOGGED TABLE changes_pending (
     xact bigint NOT NULL DEFAULT txid_current(),
     n bigserial NOT NULL,
     time text NOT NULL, change text NOT NULL, file_path text NOT NULL, record text NOT NULL, audience text NOT NULL)`,
  'CREATE INDEX changes_pending_xact ON changes_pending (xact, n)',
  'CREATE UNLOGGED TABLE changes_commits (xact bigint PRIMARY KEY)',
  // search_path fixed to the schema it is made in: the trigger resolves the tables there whoever commits.
  // The lock is this schema's (advisory locks are one set for the whole database: another
  // deployment's schema on the same server is no reason to wait), then CHANGE_LOG_LOCK shared,
  // which an earlier release's writer takes exclusively: ids stay in commit order beside it.
  `CREATE FUNCTION changes_at_commit() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
   BEGIN
     DELETE FROM changes_commits WHERE xact = NEW.xact;
     PERFORM pg_advisory_xact_lock(${SCHEMA_CHANGE_LOCK_KEY});
     PERFORM pg_advisory_xact_lock_shared(${CHANGE_LOG_LOCK});
     WITH moved AS (DELETE FROM changes_pending WHERE xact = NEW.xact RETURNING n, time, change, file_path, record, audience)
     INSERT INTO changes (time, change, file_path, record, audience) SELECT time, change, file_path, record, audience FROM moved ORDER BY n;
     RETURN NULL;
   END $$`,
  `CREATE CONSTRAINT TRIGGER changes_at_commit AFTER INSERT ON changes_commits
     DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION changes_at_commit()`,
];

/** Where a transaction notes its entries until its commit. */
const PENDING = 'changes_pending';

/** The transaction's row in changes_commits (its trigger then fires at the commit, once), sent with the entries as one statement. */
const AT_COMMIT = 'WITH at_commit AS (INSERT INTO changes_commits VALUES (txid_current()) ON CONFLICT DO NOTHING)';

/**
 * The bulk load's entries, kept in a temporary table (no WAL) until just before its commit
 * (postgres-bulk-load.ts).
 */
export const LOADED_CHANGES = 'pg_temp.sdc_changes_load';

/** Entries from arrays of kinds, paths, record texts and audiences, in their order (WITH ORDINALITY keeps it for the ids). */
const APPEND_ROWS = `${AT_COMMIT} INSERT INTO ${PENDING} (time, change, file_path, record, audience)
  SELECT $1, e.change, e.file_path, e.record, e.audience FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(change, file_path, record, audience, n) ORDER BY e.n`;

/**
 * The bulk load's 'created' entries, in the order they were loaded; parameter: the time. A
 * load's entries are many (10M for a seed of 10M), so they go straight into the log under the
 * locks the commit-time trigger takes, held from here to the load's COMMIT, rather than noted
 * and moved, which wrote each twice (docs/performance.md, "A catalog of 10M records"). The
 * lock is held across that one round trip: a load commits rarely (postgres-bulk-load.ts).
 */
const APPEND_LOADED = [
  `SELECT pg_advisory_xact_lock(${SCHEMA_CHANGE_LOCK_KEY}), pg_advisory_xact_lock_shared(${CHANGE_LOG_LOCK})`,
  `INSERT INTO changes (time, change, file_path, record, audience)
  SELECT $1, 'created', file_path, record, ${createdAudienceOfJson('record')} FROM ${LOADED_CHANGES} ORDER BY n`,
];

/** The retraction's entries (change-log.ts), noted the same way; parameter: the time. */
function appendRetracted(table: string): string {
  return `${AT_COMMIT} ${retractedFromSql(postgresJsonRecord(), table, '$1', PENDING)}`;
}

/**
 * PostgreSQL's post-write step (post-write.ts): the products' refresh (its day locks first),
 * then the change log's entries, noted for the commit to append (above). No entries, nothing
 * noted. `changes`: rows, or 'loaded' for the bulk load's temporary table, or the paths a
 * retraction noted.
 */
export function postgresPostWrite(refresh: Refresh, changes: readonly NewChange[] | 'loaded' | RetractedRows): SqlStatement[] {
  // One round trip for the lot (one-round-trip.ts): the record's transaction is BEGIN, the insert, this, COMMIT.
  return inOneRoundTrip(postWriteStatements(refresh, changes));
}

/** The post-write step's statements, in their order: the refresh (its lock first), then the change log's entries. */
export function postWriteStatements(refresh: Refresh, changes: readonly NewChange[] | 'loaded' | RetractedRows): SqlStatement[] {
  const out: SqlStatement[] = [];
  if (refresh === 'all' || refresh === 'all days') {
    for (const text of refresh === 'all' ? POSTGRES_REFRESH_ALL_SQL : POSTGRES_REFRESH_ALL_DAYS_SQL) out.push({ text, params: [] });
  } else if (refresh.length > 0) {
    const arrays = productArrays(refresh);
    for (const text of postgresRefreshSql(arrays)) out.push({ text, params: arrays });
  }
  if (changes !== 'loaded' && 'length' in changes && changes.length === 0) return out;
  if (changes === 'loaded') {
    const time = changeTime();
    out.push({ text: APPEND_LOADED[0]!, params: [] }, { text: APPEND_LOADED[1]!, params: [time] });
  }
  else if ('retractedFrom' in changes) out.push({ text: appendRetracted(changes.retractedFrom), params: [changeTime()] });
  else out.push({ text: APPEND_ROWS, params: [changeTime(), changes.map((c) => c.change), changes.map((c) => c.file_path), changes.map((c) => c.record), changes.map((c) => c.audience)] });
  return out;
}
