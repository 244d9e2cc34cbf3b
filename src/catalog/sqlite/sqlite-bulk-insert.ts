import type { Database, Statement } from 'better-sqlite3';
import type { FileRecord } from '../file-record.js';
import { putRow, RECORD_COLUMN_COUNT, RECORD_COLUMN_LIST } from '../record-columns.js';

/*
 * The SQLite bulk-insert steps that the catalog's insertMany (sqlite-catalog.ts) and the bulk
 * load on a connection of its own (sqlite-bulk-load.ts) share.
 */

/** Rows per multi-row INSERT of a bulk load (a parameter per record column each, far under SQLite's limit). */
const BULK_ROWS = 100;

/** Below this many rows the planner needs no statistics: a scan is already cheap. */
const ANALYZE_AT = 10_000;

/**
 * At most how many rows the files table holds, in O(log n): its largest rowid (the row count
 * itself unless rows were deleted). count(*) would read a whole index, about a second at ten
 * million rows.
 */
export function rowsAtMost(db: Database): number {
  return Number(db.prepare('SELECT max(rowid) FROM files').pluck().get() ?? 0);
}

/**
 * Gives the query planner statistics (ANALYZE, with the STAT4 samples better-sqlite3's SQLite
 * is built with) when it has none or the table has doubled or halved since: with them SQLite
 * plans each statement for its bound values, e.g. "ingested since X ordered by path" walks the
 * path order when many rows match and the ingestion index when few do (without them it always
 * walked the whole path order, 65 ms at 300k rows when none matched). A full ANALYZE, not
 * PRAGMA optimize: that one analyzes with a row limit, and an ANALYZE with a limit leaves no
 * STAT4 samples. Doubling keeps the cost to about twice one ANALYZE of the final table
 * (~1.5 µs a row here). Statistics never change an answer, only how it is found; the reading
 * connection uses them from its next statement on (checked by hand: a statement prepared
 * before the ANALYZE changed its plan after it).
 */
export function analyzeIfStale(db: Database): void {
  const rows = rowsAtMost(db);
  if (rows < ANALYZE_AT) return;
  const hasStats = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat4'").get() !== undefined;
  const stat = hasStats
    ? (db.prepare("SELECT stat FROM sqlite_stat1 WHERE tbl = 'files' AND idx = 'sqlite_autoindex_files_1'").pluck().get() as string | undefined)
    : undefined;
  const analyzed = stat === undefined ? 0 : Number(stat.split(' ')[0]);
  if (analyzed > 0 && rows < 2 * analyzed && 2 * rows > analyzed) return;
  db.exec('ANALYZE files');
}

/**
 * The secondary indexes of the files table, and of the change log that grows with it (one
 * entry per new record), as the database has them (their SQL kept), dropped.
 */
export function setIndexesAside(db: Database): { name: string; sql: string }[] {
  const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('files', 'changes') AND sql IS NOT NULL").all() as {
    name: string;
    sql: string;
  }[];
  for (const index of indexes) db.exec(`DROP INDEX "${index.name.replace(/"/g, '""')}"`);
  return indexes;
}

/**
 * Inserts records (sorted by path by the caller) with prepared multi-row INSERTs, ON
 * CONFLICT DO NOTHING; returns how many were new. One parameter array per statement, filled
 * in place (no array per record). `prepare` may keep the statements.
 *
 * Only inside a transaction that the caller rolls back whole if a call throws (both callers
 * do): the statements are INSERT OR FAIL, so a row refused (a NOT NULL) stops its statement
 * without undoing the statement's earlier rows. That spares SQLite a statement journal, a
 * copy of every page each 100-row statement touches, which was 9-11 % of a bulk load's CPU.
 * A path already stored is still left alone (ON CONFLICT DO NOTHING decides for the key).
 */
export function rowInserter(db: Database, prepare: (source: string) => Statement = (source) => db.prepare(source)): (sorted: readonly FileRecord[]) => number {
  const width = RECORD_COLUMN_COUNT;
  const row = `(${new Array(width).fill('?').join(',')})`;
  const statementOf = (rows: number) =>
    prepare(`INSERT OR FAIL INTO files (${RECORD_COLUMN_LIST}) VALUES ${new Array(rows).fill(row).join(',')} ON CONFLICT DO NOTHING`);
  const many = statementOf(BULK_ROWS);
  const one = statementOf(1);
  const params: unknown[] = new Array(width * BULK_ROWS);
  const single: unknown[] = new Array(width);
  return (sorted) => {
    let inserted = 0;
    let i = 0;
    for (; i + BULK_ROWS <= sorted.length; i += BULK_ROWS) {
      for (let j = 0; j < BULK_ROWS; j++) putRow(sorted[i + j]!, params, width * j);
      inserted += many.run(params).changes;
    }
    for (; i < sorted.length; i++) {
      putRow(sorted[i]!, single, 0);
      inserted += one.run(single).changes;
    }
    return inserted;
  };
}
