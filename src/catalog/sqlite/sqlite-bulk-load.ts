import Database from 'better-sqlite3';
import { backendFailure } from '../../errors/index.js';
import { byPath, outgrowsTable, piecesOf } from '../bulk-load-pieces.js';
import type { FileRecord } from '../file-record.js';
import { analyzeIfStale, rowInserter, rowsAtMost, setIndexesAside } from './sqlite-prepared-reads.js';

/**
 * Records held at once: a piece is sorted by path and inserted, then dropped. Small enough
 * that records die young (holding 100k at once cost a seed ~1.7 µs a record in GC); sorting
 * a larger run gained nothing measurable, the table's B-trees being in the page cache.
 */
const PIECE = 1000;

/** While the secondary indexes are kept (a load smaller than the table), commit this often. */
const COMMIT_EVERY = 100_000;

/** Page cache of the load's own connection: the table, its key and the index builds' sorts (256 MiB). */
const LOAD_CACHE_KIB = 262_144;

/**
 * A bulk load of an SQLite catalog file, on a connection of its own. Records go in as they
 * come, a sorted piece at a time, with ON CONFLICT DO NOTHING. While what was loaded is
 * smaller than the table was at the start, the indexes are kept and the load commits every
 * COMMIT_EVERY records. Once it outgrows the table (outgrowsTable), the secondary
 * indexes, as the database lists them, are dropped and the rest of the load runs in one
 * transaction that builds them again and gathers the planner statistics before it commits:
 * indexes are built once for the whole load instead of kept row by row. That transaction is
 * all or nothing, so a crash or failure during it leaves the table as the last commit left
 * it, every index included; readers on other connections see that state until it commits
 * (WAL). Other writers wait for it (busy_timeout), as for any long write.
 *
 * synchronous stays FULL: the load's commits are as durable as an upload's; the rebuild
 * transaction has one commit, so it costs one sync.
 */
export async function sqliteBulkLoad(file: string, records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
  const source: { error?: unknown } = {};
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = FULL');
    db.pragma(`cache_size = -${LOAD_CACHE_KIB}`);
    const insert = rowInserter(db);
    const atStart = rowsAtMost(db);
    let given = 0;
    let inserted = 0;
    let sinceCommit = 0;
    let setAside: { name: string; sql: string }[] | undefined;
    db.exec('BEGIN IMMEDIATE');
    try {
      for await (const piece of piecesOf(records, PIECE, source)) {
        piece.sort(byPath);
        given += piece.length;
        if (!setAside && outgrowsTable(given, atStart)) setAside = setIndexesAside(db);
        inserted += insert(piece);
        if (!setAside && (sinceCommit += piece.length) >= COMMIT_EVERY) {
          db.exec('COMMIT');
          db.exec('BEGIN IMMEDIATE');
          sinceCommit = 0;
        }
      }
      for (const index of setAside ?? []) db.exec(index.sql);
      analyzeIfStale(db);
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
    return inserted;
  } catch (err) {
    if (source.error !== undefined && err === source.error) throw err;
    throw backendFailure('SQLite catalog', 'insert', err);
  } finally {
    db?.close();
  }
}
