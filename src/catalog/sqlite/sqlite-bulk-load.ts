import Database from 'better-sqlite3';
import { backendFailure } from '../../errors/index.js';
import { byPath, outgrowsTable, piecesOf } from '../bulk-load-pieces.js';
import type { FileRecord } from '../file-record.js';
import { analyzeIfStale, rowInserter, rowsAtMost, setIndexesAside } from './sqlite-bulk-insert.js';
import { distinctProducts, type ProductKey } from '../product-refresh.js';
import { runSqliteStatements, sqlitePostWrite } from './sqlite-post-write.js';

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
 *
 * With `alone`, the load asks for the file to itself (loadWithoutSharing) and, when no other
 * connection has it open, journals with a rollback journal instead of the WAL.
 */
export async function sqliteBulkLoad(
  file: string,
  records: Iterable<FileRecord> | AsyncIterable<FileRecord>,
  options: { alone?: boolean } = {},
): Promise<number> {
  const source: { error?: unknown } = {};
  let db: Database.Database | undefined;
  let rollbackJournal = false;
  try {
    db = new Database(file);
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = FULL');
    db.pragma(`cache_size = -${LOAD_CACHE_KIB}`);
    rollbackJournal = options.alone === true && loadWithoutSharing(db);
    const insert = rowInserter(db);
    const prepare = (source: string) => db!.prepare(source);
    const atStart = rowsAtMost(db);
    let given = 0;
    let inserted = 0;
    let sinceCommit = 0;
    let setAside: { name: string; sql: string }[] | undefined;
    // Each transaction ends with the post-write step (post-write.ts): the latest flags and
    // coverage rows of the products it wrote (of all, once the indexes were set aside), then
    // the change log's entries of its new rows (rowids past the largest at its start).
    db.exec('BEGIN IMMEDIATE');
    let mark = rowsAtMost(db);
    let sinceMark = 0;
    const written: ProductKey[] = [];
    const commit = (last = false) => {
      if (setAside || sinceMark > 0) runSqliteStatements(sqlitePostWrite(setAside ? 'all' : written, sinceMark > 0 ? { sinceRowid: mark } : []), prepare);
      written.length = 0;
      if (last) analyzeIfStale(db!);
      db!.exec('COMMIT');
    };
    try {
      for await (const piece of piecesOf(records, PIECE, source)) {
        piece.sort(byPath);
        given += piece.length;
        if (!setAside && outgrowsTable(given, atStart)) setAside = setIndexesAside(db);
        const added = insert(piece);
        inserted += added;
        sinceMark += added;
        if (!setAside && added > 0) written.push(...distinctProducts(piece));
        if (!setAside && (sinceCommit += piece.length) >= COMMIT_EVERY) {
          commit();
          db.exec('BEGIN IMMEDIATE');
          mark = rowsAtMost(db);
          sinceMark = 0;
          sinceCommit = 0;
        }
      }
      for (const index of setAside ?? []) db.exec(index.sql);
      commit(true);
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
    return inserted;
  } catch (err) {
    if (source.error !== undefined && err === source.error) throw err;
    throw backendFailure('SQLite catalog', 'insert', err);
  } finally {
    if (rollbackJournal) backToWal(db!);
    db?.close();
  }
}

/**
 * Switches the load's connection to a rollback journal if it can: only when no other
 * connection, in this process or another, has the file open (SQLite refuses the switch
 * out of WAL at once otherwise, and the load keeps the WAL). Why: in WAL every page of a
 * load is written twice, once to the WAL and once more when the checkpoint copies it into
 * the file; a rollback journal keeps only the pages the load changes that existed before it
 * (none, for a new catalog) and the load writes the file directly. 1M records into a new
 * catalog: 1.26–1.43× records per CPU second, system time 5 s → 1.4 s (docs/performance.md).
 * As durable: synchronous stays FULL, and a crash leaves a hot journal that the next
 * connection to open the file rolls back before anything reads it. The cost, while it
 * lasts: once the load's pages spill into the file, a reader waits out its busy_timeout
 * and is refused, and a server cannot start on the catalog (it asks for the WAL at start,
 * see walOrRefuse); hence only with `alone`, which `sdc seed` passes (bulkLoadCatalog).
 */
function loadWithoutSharing(db: Database.Database): boolean {
  try {
    return db.pragma('journal_mode = DELETE', { simple: true }) === 'delete';
  } catch {
    return false; // SQLITE_BUSY: the file is open elsewhere; the load runs in WAL as usual
  }
}

/**
 * Back to WAL after the load, as every catalog connection expects. If it cannot be done now
 * (a connection that opened the file meanwhile holds a lock past busy_timeout), the file
 * stays in rollback mode until the next catalog open, which asks for WAL again; the loaded
 * rows are committed either way.
 */
function backToWal(db: Database.Database): void {
  try {
    db.pragma('journal_mode = WAL');
  } catch {
    // see above: the next openSqliteCatalog switches it
  }
}
