import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Statement } from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { backendCall } from '../../errors/index.js';
import { byPath, outgrowsTable } from '../bulk-load-pieces.js';
import { SQLITE_DIALECT } from '../catalog-dialect.js';
import type { FileRecord } from '../file-record.js';
import type { KeyStore } from '../key-store.js';
import type { MigrateOptions, MigrationPlan } from '../migration-plan.js';
import { migrateToLatest, migrationPlan } from '../migration-runner.js';
import { fieldsRead, recordOfRow } from '../record-columns.js';
import type { RecordField } from '../../wire/record.js';
import { PATH_EXISTS_SQL, RECORD_BY_PATH_SQL } from '../record-reads.js';
import type { CatalogDatabase } from '../schema.js';
import { SqlCatalog } from '../sql-catalog.js';
import { analyzeIfStale, rowInserter, rowsAtMost, setIndexesAside } from './sqlite-bulk-insert.js';
import { sqliteBulkLoad } from './sqlite-bulk-load.js';
import { SqliteKeyStore } from './sqlite-key-store.js';
import { runSqliteStatements, sqlitePostWrite } from './sqlite-post-write.js';
import { SqliteReadPool } from './sqlite-read-pool.js';
import { statementCache, withStatementCache } from './sqlite-statements.js';

/** Page size of a newly created catalog file, in bytes. */
export const NEW_CATALOG_PAGE_SIZE = 16_384;

/** What migrating the SQLite file would do (`sdc migrate --check`), read without changing it. */
export async function sqliteMigrationPlan(file: string): Promise<MigrationPlan> {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new Database(file, { readonly: true, fileMustExist: true }) }) });
  try {
    return await migrationPlan(db, SQLITE_DIALECT);
  } finally {
    await db.destroy();
  }
}

/**
 * The embedded catalog: one SQLite file. WAL lets readers run beside the writer;
 * synchronous=FULL makes a committed insert survive a crash or power loss, so a PUT
 * that was acknowledged always has its record.
 */
export async function openSqliteCatalog(
  file: string,
  onMigrated?: (applied: readonly string[]) => void,
  migrate: MigrateOptions = {},
): Promise<SqliteCatalog> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file);
  // 16 KiB pages for a catalog created now (SQLite's default is 4 KiB): a bulk load writes,
  // journals and checkpoints a quarter as many pages, each with fewer system calls (see
  // docs/performance.md). It takes effect only on a file that has no page yet; an existing
  // catalog keeps its page size (changing it would take a VACUUM outside WAL).
  if (file !== ':memory:') sqlite.pragma(`page_size = ${NEW_CATALOG_PAGE_SIZE}`);
  sqlite.pragma('busy_timeout = 5000');
  walOrRefuse(sqlite, file);
  sqlite.pragma('synchronous = FULL');
  // 64 MiB of page cache (default 2 MiB): the indexes of a million-file catalog stay in memory.
  sqlite.pragma('cache_size = -65536');
  const db = new Kysely<CatalogDatabase>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  try {
    // Migrated first, then told: an optional call (?.) would skip evaluating its argument.
    const applied = await migrateToLatest(db as Kysely<unknown>, SQLITE_DIALECT, undefined, migrate);
    onMigrated?.(applied);
  } catch (err) {
    // A refused catalog (say, one a newer build migrated) leaves no handle open behind it.
    await db.destroy();
    throw new Error(`cannot open the SQLite catalog ${file}: ${(err as Error).message}`, { cause: err });
  }
  // Statistics for the planner if the catalog has none or has doubled or halved since (a
  // catalog filled by an older version, or grown by uploads); see analyzeIfStale.
  // Only an optimization: a catalog that another process holds busy opens without it.
  try {
    analyzeIfStale(sqlite);
  } catch {
    // the statistics stay as they were; the next bulk load or start tries again
  }
  // The hot reads' own connection (see SqliteCatalog); an in-memory database has only the one.
  let reader: Database.Database;
  try {
    reader = file === ':memory:' ? sqlite : new Database(file, { readonly: true });
  } catch (err) {
    await db.destroy();
    throw err;
  }
  if (reader !== sqlite) {
    reader.pragma('busy_timeout = 5000');
    reader.pragma('cache_size = -65536');
  }
  // Threads for the reads that can take long, each with its own read-only connection (WAL);
  // started when first needed. An in-memory database has only its one connection.
  const pool = reader !== sqlite ? new SqliteReadPool(file) : undefined;
  const close = async () => {
    await pool?.close();
    if (reader !== sqlite) reader.close();
    await db.destroy();
  };
  return new SqliteCatalog(db, reader, close, sqlite, pool);
}

/**
 * Asks for the WAL, which every catalog connection uses. While another process holds the
 * file alone (`sdc seed` loading with a rollback journal, see sqlite-bulk-load.ts), SQLite
 * refuses it, at once or after busy_timeout (at once while the load holds no more than its
 * write reservation, since waiting could deadlock); this says why, instead of SQLite's bare
 * "database is locked".
 */
function walOrRefuse(sqlite: Database.Database, file: string): void {
  try {
    sqlite.pragma('journal_mode = WAL');
  } catch (err) {
    sqlite.close();
    if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
    throw new Error(
      `the catalog ${file} is held by another process (a bulk load such as sdc seed holds a catalog that nothing else had open until it ends); try again when it has finished`,
      { cause: err },
    );
  }
}

/**
 * The SQLite catalog: reads (record by path, query pages, counts, coverage, key checks) as
 * better-sqlite3 prepared statements kept per SQL text, rows read as arrays, on their own
 * read-only connection when the catalog is a file (WAL: they see committed data only and
 * never wait behind a write transaction), the long ones on reading threads (sqlite-read-pool.ts);
 * bulk inserts as prepared multi-row INSERTs on the writing connection. Other writes,
 * leases and migrations are the shared Kysely ones (sql-catalog.ts).
 */
export class SqliteCatalog extends SqlCatalog {
  /** Statements of the reading and of the writing connection, kept per SQL text. */
  private readonly read: (source: string) => Statement;
  private readonly write: (source: string) => Statement;
  private readonly byPath: Statement;
  private readonly pathExists: Statement;
  /** getFields' statements, one per (constant) field list. */
  private readonly byPathFields = new Map<string, Statement>();

  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly reader: Database.Database,
    onClose: () => Promise<void>,
    /** The connection Kysely writes through: bulk inserts use it directly (insertMany). */
    private readonly writer: Database.Database,
    /** Threads for the reads that can take long (query pages, counts, coverage); none for an in-memory catalog. */
    private readonly pool?: SqliteReadPool,
  ) {
    super(db, onClose, SQLITE_DIALECT);
    this.read = statementCache(reader);
    this.write = statementCache(writer);
    this.byPath = reader.prepare(RECORD_BY_PATH_SQL).raw();
    this.pathExists = reader.prepare(PATH_EXISTS_SQL).pluck();
  }

  /**
   * Many records in one synchronous transaction of prepared multi-row INSERTs, sorted by
   * file_path so that the primary key's B-tree is filled in order; same answer as the shared
   * insertMany (existing paths are left alone, the count of new ones returned). While Kysely
   * holds a transaction open on the connection (between its awaits), this defers to Kysely's
   * own insertMany, which waits its turn, so the two never mix.
   */
  override insertMany(records: readonly FileRecord[]): Promise<number> {
    if (this.writer.inTransaction) return super.insertMany(records);
    return this.driver('insert', async () => this.bulkInsert(records));
  }

  private bulkInsert(records: readonly FileRecord[]): number {
    if (records.length === 0) return 0;
    const writer = this.writer;
    const sorted = [...records].sort(byPath);
    const insert = rowInserter(writer, this.write);
    return writer.transaction(() => {
      // A load larger than what is there already: drop the secondary indexes, fill the table,
      // build them again in one pass each (far cheaper than as many random inserts), all in
      // this transaction, so readers see the old table, indexes included, until it commits.
      const before = rowsAtMost(writer);
      const indexes = outgrowsTable(sorted.length, before) ? setIndexesAside(writer) : [];
      const inserted = insert(sorted);
      for (const index of indexes) writer.exec(index.sql);
      // The post-write step (post-write.ts): all latest flags and coverage rows after a load
      // that outgrew the table, then the change log's entries of the rows just inserted.
      if (indexes.length > 0 || inserted > 0) {
        runSqliteStatements(sqlitePostWrite(indexes.length > 0 ? 'all' : sorted, inserted > 0 ? { sinceRowid: before } : []), this.write);
      }
      // A load that doubled the table (a seed, a reconcile of a store full of unindexed files).
      analyzeIfStale(writer);
      return inserted;
    })();
  }

  /**
   * A load through a connection of its own (see sqlite-bulk-load.ts), so that its long
   * transaction never takes in other writes of this process; an in-memory catalog has only
   * its one connection and loads through insertMany.
   */
  override bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
    if (this.writer.memory) return super.bulkLoad(records);
    return sqliteBulkLoad(this.writer.name, records);
  }

  /** At once, no promise: better-sqlite3 answers synchronously. */
  get(filePath: string): FileRecord | undefined {
    const row = backendCall(this.backendName(), 'read', () => this.byPath.get(filePath)) as unknown[] | undefined;
    return row && recordOfRow(row);
  }

  /** At once, no promise, like get. */
  getFields<F extends RecordField>(filePath: string, fields: readonly F[]): Pick<FileRecord, F> | undefined {
    const read = fieldsRead(fields);
    let statement = this.byPathFields.get(read.text);
    if (statement === undefined) this.byPathFields.set(read.text, (statement = this.reader.prepare(read.text).raw()));
    const row = backendCall(this.backendName(), 'read', () => statement.get(filePath)) as unknown[] | undefined;
    return row && read.recordOf(row);
  }

  /** At once, no promise, like get. */
  has(filePath: string): boolean {
    return backendCall(this.backendName(), 'read', () => this.pathExists.get(filePath) !== undefined);
  }

  /**
   * A statement's rows as arrays: on a reading thread when there are some, else here (in-memory
   * catalogs). A point read (one path: at most one record by the primary key) stays here too,
   * like get: the trip to a thread and back costs more than the read (docs/performance.md,
   * "What changed"), and under load far more ("Who sees what at scale").
   */
  protected async rowsOf(text: string, params: unknown[], turn: number, point = false): Promise<unknown[][]> {
    if (this.pool && !point) return (await this.pool.run(text, params, 'rows', turn)) as unknown[][];
    return this.read(text).raw().all(...params) as unknown[][];
  }

  override keys(): KeyStore {
    return new SqliteKeyStore(this.db, this.reader);
  }
}
