import type { Statement } from 'better-sqlite3';
import { changeTime, retractedFromSql, sqliteCreatedSinceSql, type NewChange } from '../change-log.js';
import type { Refresh, RetractedRows, SqlStatement } from '../post-write.js';
import { distinctProducts, REFRESH_ALL_DAYS_SQL, REFRESH_ALL_SQL, refreshStatements } from '../product-refresh.js';
import { sqliteJsonRecord } from './sqlite-json-record.js';

/** The 'created' entries of the rows past a rowid (change-log.ts); parameters: time, that rowid. */
const APPEND_CREATED_SINCE = sqliteCreatedSinceSql(sqliteJsonRecord());

/** One entry; parameters: time, change, file_path, record, audience. */
const APPEND_ONE = 'INSERT INTO changes (time, change, file_path, record, audience) VALUES (?, ?, ?, ?, ?)';

/**
 * SQLite's post-write step (post-write.ts): the products' refresh, then the change log's entries
 * (SQLite serialises its writers: ids are in commit order without a lock). `changes`: rows, or
 * the rows the transaction inserted past a rowid it began with (the bulk paths), or the paths a
 * retraction noted.
 */
export function sqlitePostWrite(refresh: Refresh, changes: readonly NewChange[] | { readonly sinceRowid: number } | RetractedRows): SqlStatement[] {
  const whole = refresh === 'all' ? REFRESH_ALL_SQL : refresh === 'all days' ? REFRESH_ALL_DAYS_SQL : undefined;
  const out: SqlStatement[] = whole ? whole.map((text) => ({ text, params: [] })) : refreshStatements(distinctProducts(refresh as Exclude<Refresh, string>));
  const time = changeTime();
  if ('sinceRowid' in changes) out.push({ text: APPEND_CREATED_SINCE, params: [time, changes.sinceRowid] });
  else if ('retractedFrom' in changes) out.push({ text: retractedFromSql(sqliteJsonRecord(), changes.retractedFrom, '?'), params: [time] });
  else for (const c of changes) out.push({ text: APPEND_ONE, params: [time, c.change, c.file_path, c.record, c.audience] });
  return out;
}

/** Runs the step's statements on a better-sqlite3 connection, in the caller's transaction (`prepare` may keep them). */
export function runSqliteStatements(statements: readonly SqlStatement[], prepare: (source: string) => Statement): void {
  for (const { text, params } of statements) prepare(text).run(...params);
}
