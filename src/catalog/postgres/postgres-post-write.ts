import { changeTime, createdAudienceOfJson, POSTGRES_CHANGE_LOCK_SQL, type NewChange } from '../change-log.js';
import type { Refresh, SqlStatement } from '../post-write.js';
import { POSTGRES_REFRESH_ALL_SQL, postgresRefreshSql, productArrays } from '../product-refresh.js';

/**
 * The bulk load's entries, kept in a temporary table (no WAL) until just before its commit
 * (postgres-bulk-load.ts), so that the log's lock is taken then and not while the load waits.
 */
export const LOADED_CHANGES = 'pg_temp.sdc_changes_load';

/** Entries from arrays of kinds, paths, record texts and audiences, in their order (WITH ORDINALITY keeps it for the ids). */
const APPEND_ROWS = `INSERT INTO changes (time, change, file_path, record, audience)
  SELECT $1, e.change, e.file_path, e.record, e.audience FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(change, file_path, record, audience, n) ORDER BY e.n`;

/** The bulk load's 'created' entries, in the order they were loaded; parameter: the time. */
const APPEND_LOADED = `INSERT INTO changes (time, change, file_path, record, audience)
  SELECT $1, 'created', file_path, record, ${createdAudienceOfJson('record')} FROM ${LOADED_CHANGES} ORDER BY n`;

/**
 * PostgreSQL's post-write step (post-write.ts): the products' refresh (its day locks first),
 * then the change log's advisory lock and the append as the transaction's last statements
 * (change-log.ts: ids in commit order). No entries, no lock. `changes`: rows, or 'loaded' for
 * the bulk load's temporary table.
 */
export function postgresPostWrite(refresh: Refresh, changes: readonly NewChange[] | 'loaded'): SqlStatement[] {
  const out: SqlStatement[] = [];
  if (refresh === 'all') {
    for (const text of POSTGRES_REFRESH_ALL_SQL) out.push({ text, params: [] });
  } else if (refresh.length > 0) {
    const arrays = productArrays(refresh);
    for (const text of postgresRefreshSql(arrays)) out.push({ text, params: arrays });
  }
  if (changes !== 'loaded' && changes.length === 0) return out;
  out.push({ text: POSTGRES_CHANGE_LOCK_SQL, params: [] });
  if (changes === 'loaded') out.push({ text: APPEND_LOADED, params: [changeTime()] });
  else out.push({ text: APPEND_ROWS, params: [changeTime(), changes.map((c) => c.change), changes.map((c) => c.file_path), changes.map((c) => c.record), changes.map((c) => c.audience)] });
  return out;
}
