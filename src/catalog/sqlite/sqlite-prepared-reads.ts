import { backendFailure } from '../../errors/index.js';
import type { Database, Statement } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { CatalogDialect } from '../catalog-dialect.js';
import type { FileRecord } from '../file-record.js';
import { keyIdOf, keyMatches, verdictOf, type KeyCheck, type KeyStore } from '../key-store.js';
import { KyselyCatalog, QUERY_PAGE_SIZE } from '../kysely-catalog.js';
import { KyselyKeyStore } from '../kysely-key-store.js';
import type { QueryFilter } from '../query-filter.js';
import { DEFAULT_SORT, type QueryOptions, type QueryPosition } from '../query-options.js';
import { pageSql, whereOf } from '../filter-sql.js';
import { RecordPages } from '../record-pages.js';
import { byPath, outgrowsTable } from '../bulk-load-pieces.js';
import { sqliteBulkLoad } from './sqlite-bulk-load.js';
import { RECORD_COLUMNS as COLUMNS, recordOfRow as toRecord, type RecordRow as Row } from '../record-row.js';
import type { CatalogDatabase } from '../schema.js';

/**
 * A row as the JSON text JSON.stringify gives its record: fields in FileRecord's order, size a
 * number, uploader only when there is one.
 */
const JSON_FIELDS = "'file_path', file_path, 'instrument', instrument, 'data_level', data_level, 'descriptor', descriptor, 'start_date', start_date, 'end_date', end_date, 'version', version, 'extension', extension, 'ingestion_date', ingestion_date, 'size', size, 'sha256', sha256";
const JSON_RECORD = `CASE WHEN uploader IS NULL THEN json_object(${JSON_FIELDS}) ELSE json_object(${JSON_FIELDS}, 'uploader', uploader) END`;

/** Rows per multi-row INSERT of a bulk load (12 parameters each, far under SQLite's limit). */
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

/** The secondary indexes of the files table as the database has them (their SQL kept), dropped. */
export function setIndexesAside(db: Database): { name: string; sql: string }[] {
  const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'files' AND sql IS NOT NULL").all() as { name: string; sql: string }[];
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
  const row = `(${new Array(12).fill('?').join(',')})`;
  const statementOf = (rows: number) =>
    prepare(`INSERT OR FAIL INTO files (${COLUMNS}) VALUES ${new Array(rows).fill(row).join(',')} ON CONFLICT DO NOTHING`);
  const many = statementOf(BULK_ROWS);
  const one = statementOf(1);
  const params: unknown[] = new Array(12 * BULK_ROWS);
  const single: unknown[] = new Array(12);
  const put = (r: FileRecord, into: unknown[], at: number) => {
    into[at] = r.file_path;
    into[at + 1] = r.instrument;
    into[at + 2] = r.data_level;
    into[at + 3] = r.descriptor;
    into[at + 4] = r.start_date;
    into[at + 5] = r.end_date;
    into[at + 6] = r.version;
    into[at + 7] = r.extension;
    into[at + 8] = r.ingestion_date;
    into[at + 9] = r.size;
    into[at + 10] = r.sha256;
    into[at + 11] = r.uploader ?? null;
  };
  return (sorted) => {
    let inserted = 0;
    let i = 0;
    for (; i + BULK_ROWS <= sorted.length; i += BULK_ROWS) {
      for (let j = 0; j < BULK_ROWS; j++) put(sorted[i + j]!, params, 12 * j);
      inserted += many.run(params).changes;
    }
    for (; i < sorted.length; i++) {
      put(sorted[i]!, single, 0);
      inserted += one.run(single).changes;
    }
    return inserted;
  };
}

/** Statements kept per SQL text (a shape has one text): bounded, least recently used dropped. */
const STATEMENTS = 256;

/**
 * The SQLite catalog's hot reads (record by path, query pages, counts, key checks) as
 * better-sqlite3 prepared statements, one per filter shape, rows read as arrays: no query
 * building or compiling per request. Writes, coverage and migrations stay with Kysely.
 * Reads go through their own connection when the catalog is a file (WAL: they see committed
 * data only, and never wait behind a write transaction); nothing is cached but statements.
 */
export class SqliteCatalog extends KyselyCatalog {
  private readonly statements = new Map<string, Statement>();
  private readonly byPath: Statement;
  private readonly pathExists: Statement;

  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly reader: Database,
    onClose: () => Promise<void>,
    dialect: CatalogDialect,
    /** The connection Kysely writes through: bulk inserts use it directly (insertMany). */
    private readonly writer?: Database,
  ) {
    super(db, onClose, dialect);
    this.byPath = reader.prepare(`SELECT ${COLUMNS} FROM files WHERE file_path = ?`).raw();
    // Answered from the path's own index: no table row read, no record built.
    this.pathExists = reader.prepare('SELECT 1 FROM files WHERE file_path = ?').pluck();
  }

  /**
   * Many records in one synchronous transaction of prepared multi-row INSERTs, sorted by
   * file_path so that the primary key's B-tree is filled in order; same answer as the shared
   * insertMany (existing paths are left alone, the count of new ones returned). While Kysely
   * holds a transaction open on the connection (between its awaits), this defers to Kysely's
   * own insertMany, which waits its turn, so the two never mix.
   */
  override insertMany(records: readonly FileRecord[]): Promise<number> {
    const writer = this.writer;
    if (!writer || writer.inTransaction) return super.insertMany(records);
    return this.driver('insert', async () => this.bulkInsert(writer, records));
  }

  private bulkInsert(writer: Database, records: readonly FileRecord[]): number {
    if (records.length === 0) return 0;
    const sorted = [...records].sort(byPath);
    const insert = rowInserter(writer, (source) => this.statement(source, writer));
    return writer.transaction(() => {
      // A load larger than what is there already: drop the secondary indexes, fill the table,
      // build them again in one pass each (far cheaper than as many random inserts), all in
      // this transaction, so readers see the old table, indexes included, until it commits.
      const indexes = outgrowsTable(sorted.length, rowsAtMost(writer)) ? setIndexesAside(writer) : [];
      const inserted = insert(sorted);
      for (const index of indexes) writer.exec(index.sql);
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
    const writer = this.writer;
    if (!writer || writer.memory) return super.bulkLoad(records);
    return sqliteBulkLoad(writer.name, records);
  }

  private statement(source: string, on: Database = this.reader): Statement {
    const key = on === this.reader ? source : `writer:${source}`;
    let statement = this.statements.get(key);
    if (statement) {
      this.statements.delete(key);
    } else {
      statement = on.prepare(source);
      if (this.statements.size >= STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(key, statement);
    return statement;
  }

  /** At once, no promise: better-sqlite3 answers synchronously. */
  override get(filePath: string): FileRecord | undefined {
    let row: Row | undefined;
    try {
      row = this.byPath.get(filePath) as Row | undefined;
    } catch (err) {
      throw backendFailure('SQLite catalog', 'read', err);
    }
    return row && toRecord(row);
  }

  /** At once, no promise, like get. */
  override has(filePath: string): boolean {
    try {
      return this.pathExists.get(filePath) !== undefined;
    } catch (err) {
      throw backendFailure('SQLite catalog', 'read', err);
    }
  }

  override count(filter: QueryFilter): Promise<number> {
    return this.driver('count', async () => {
      const params: unknown[] = [];
      const where = whereOf(filter, params);
      const source = `SELECT count(*) FROM files${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
      return Number(this.statement(source).pluck().get(...params));
    });
  }

  /**
   * Keyset pages (as the shared catalog), each page one call of a prepared statement; the
   * same pages can also be read as JSON texts written by SQLite (RecordPages.jsonPages).
   */
  override query(filter: QueryFilter, options: QueryOptions = {}): RecordPages {
    const sort = options.sort ?? DEFAULT_SORT;
    const limit = options.limit ?? Infinity;
    const statementFor = (columns: string, after: QueryPosition | undefined, size: number) => {
      const { text, params } = pageSql(columns, filter, sort, after, size);
      return { statement: this.statement(text).raw(), params };
    };
    /** Pages of whatever `read` makes of a page; `position` says where the next page starts. */
    const walk = <T>(read: (after: QueryPosition | undefined, size: number) => T[], position: (item: T) => QueryPosition) =>
      async function* (): AsyncIterable<T[]> {
        let after = options.after;
        let remaining = limit;
        while (remaining > 0) {
          const size = Math.min(QUERY_PAGE_SIZE, remaining);
          const items = read(after, size);
          if (items.length > 0) yield items;
          if (items.length < size) return;
          remaining -= items.length;
          after = position(items[items.length - 1]!);
        }
      };
    const records = walk(
      (after, size) => {
        const { statement, params } = statementFor(COLUMNS, after, size);
        return (statement.all(...params) as Row[]).map(toRecord);
      },
      (last) => ({ key: last[sort.field], file_path: last.file_path }),
    );
    // [json, file_path, sort key]: the text to send and where the next page starts.
    const json = walk(
      (after, size) => {
        const { statement, params } = statementFor(`${JSON_RECORD}, file_path, ${sort.field}`, after, size);
        return statement.all(...params) as [string, string, string][];
      },
      (last) => ({ key: last[2], file_path: last[1] }),
    );
    return new RecordPages(records, async function* () {
      for await (const page of json()) yield page.map((row) => row[0]);
    });
  }

  /** Every file_path in keyset pages (reconcile), no record built. */
  override async *paths(): AsyncIterable<string> {
    const first = this.reader.prepare('SELECT file_path FROM files ORDER BY file_path LIMIT ?').pluck();
    const next = this.reader.prepare('SELECT file_path FROM files WHERE file_path > ? ORDER BY file_path LIMIT ?').pluck();
    let page = first.all(QUERY_PAGE_SIZE) as string[];
    while (page.length > 0) {
      yield* page;
      if (page.length < QUERY_PAGE_SIZE) return;
      page = next.all(page[page.length - 1], QUERY_PAGE_SIZE) as string[];
    }
  }

  override keys(): KeyStore {
    return new SqliteKeyStore(this.db, this.reader);
  }
}

/** Key checks with prepared statements; every check reads the database (a revoked key is refused at once). */
class SqliteKeyStore extends KyselyKeyStore {
  private readonly byId: Statement;
  private readonly any: Statement;

  constructor(db: Kysely<CatalogDatabase>, reader: Database) {
    super(db);
    this.byId = reader.prepare('SELECT name, key_hash, revoked_at FROM api_keys WHERE key_id = ?').raw();
    this.any = reader.prepare('SELECT 1 FROM api_keys LIMIT 1').pluck();
  }

  /** At once, no promise: better-sqlite3 answers synchronously. */
  override check(presented: string): KeyCheck {
    const keyId = keyIdOf(presented);
    if (keyId === undefined) return { kind: 'invalid' };
    // [name, key_hash, revoked_at]
    let row: [string, string, string | null] | undefined;
    try {
      row = this.byId.get(keyId) as typeof row;
    } catch (err) {
      throw backendFailure('SQLite catalog', 'key check', err);
    }
    if (!row || !keyMatches(presented, row[1])) return { kind: 'invalid' };
    return verdictOf(row[0], row[2]);
  }

  override async anyExist(): Promise<boolean> {
    return this.any.get() !== undefined;
  }
}
