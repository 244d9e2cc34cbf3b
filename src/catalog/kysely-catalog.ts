import { backendFailure } from '../errors/index.js';
import { transactionReportingCause } from './first-failure-transaction.js';
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { Catalog } from './catalog.js';
import { SQLITE_DIALECT, type CatalogDialect } from './catalog-dialect.js';
import type { CoverageDay } from './coverage-day.js';
import { piecesOf } from './bulk-load-pieces.js';
import type { FileRecord } from './file-record.js';
import type { KeyStore } from './key-store.js';
import { coverageDays } from './coverage-sql.js';
import { numbered } from './filter-sql.js';
import { distinctProducts, postgresRefreshSql, productArrays, refreshStatements } from './product-refresh.js';
import { applyFilter, orderedFiles } from './kysely-filter.js';
import { KyselyKeyStore } from './kysely-key-store.js';
import { KyselyNameLeases } from './kysely-name-leases.js';
import type { NameLeases } from './name-leases.js';
import type { QueryFilter } from './query-filter.js';
import { DEFAULT_SORT, positionOf, type QueryOptions, type QueryPosition, type QuerySort } from './query-options.js';
import type { CatalogDatabase, FilesTable } from './schema.js';

/** Rows fetched per round trip when streaming a query: bounds memory, whatever the match count. */
export const QUERY_PAGE_SIZE = 1000;

/** Rows per multi-row INSERT (12 parameters each; SQLite allows 32766 per statement). */
const INSERT_BATCH = 500;

/** Records per transaction of the shared bulkLoad. */
const BULK_CHUNK = 10_000;

/**
 * The catalog's queries, written once with Kysely; the sqlite and postgres adapters
 * only open a connection and hand it over.
 */
export class KyselyCatalog implements Catalog {
  constructor(
    protected readonly db: Kysely<CatalogDatabase>,
    private readonly onClose: () => Promise<void> = () => db.destroy(),
    private readonly dialect: CatalogDialect = SQLITE_DIALECT,
  ) {}

  insert(record: FileRecord): Promise<'inserted' | 'exists'> {
    return this.driver('insert', () => this.insertOnce(record));
  }

  private async insertOnce(record: FileRecord): Promise<'inserted' | 'exists'> {
    const inserted = await transactionReportingCause(this.db, async (trx) => {
      const result = await trx
        .insertInto('files')
        .values({ ...record, uploader: record.uploader ?? null })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      await this.refreshProducts(trx, [record]);
      return true;
    });
    if (inserted) return 'inserted';
    if (record.uploader !== undefined) await this.fillUploader(record);
    return 'exists';
  }

  /**
   * The latest flags and coverage rows of the records' products, in the writing transaction
   * (product-refresh.ts: the one place they are recomputed).
   */
  private async refreshProducts(trx: Kysely<CatalogDatabase>, records: readonly FileRecord[]): Promise<void> {
    if (this.dialect.engine === 'postgres') {
      const arrays = productArrays(records);
      for (const text of postgresRefreshSql(arrays)) await trx.executeQuery(CompiledQuery.raw(text, arrays));
      return;
    }
    for (const { text, params } of refreshStatements(distinctProducts(records))) await trx.executeQuery(CompiledQuery.raw(text, params));
  }

  /**
   * The record of these same bytes was written first without an uploader (a reader
   * indexed the file between its link and the PUT's insert): the PUT's uploader goes
   * in. Never replaces an uploader, never touches a record of other bytes.
   */
  private async fillUploader(record: FileRecord): Promise<void> {
    await this.db
      .updateTable('files')
      .set({ uploader: record.uploader ?? null })
      .where('file_path', '=', record.file_path)
      .where('sha256', '=', record.sha256)
      .where('uploader', 'is', null)
      .execute();
  }

  async insertMany(records: readonly FileRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    return this.driver('insert', () => transactionReportingCause(this.db, async (trx) => {
      let inserted = 0;
      // Rows per statement: 12 columns each stays under every backend's parameter limit.
      for (let i = 0; i < records.length; i += INSERT_BATCH) {
        const rows = records.slice(i, i + INSERT_BATCH).map((r) => ({ ...r, uploader: r.uploader ?? null }));
        const result = await trx.insertInto('files').values(rows).onConflict((oc) => oc.doNothing()).executeTakeFirst();
        inserted += Number(result.numInsertedOrUpdatedRows ?? 0);
      }
      if (inserted > 0) await this.refreshProducts(trx, records);
      return inserted;
    }));
  }

  /** Without a bulk path of the backend's own: insertMany a chunk at a time. */
  async bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
    let inserted = 0;
    for await (const chunk of piecesOf(records, BULK_CHUNK, {})) inserted += await this.insertMany(chunk);
    return inserted;
  }

  get(filePath: string): FileRecord | undefined | Promise<FileRecord | undefined> {
    return this.driver('read', async () => {
      const row = await this.db.selectFrom('files').selectAll().where('file_path', '=', filePath).executeTakeFirst();
      return row && toRecord(row);
    });
  }

  has(filePath: string): boolean | Promise<boolean> {
    return this.driver('read', async () => (await this.db.selectFrom('files').select('file_path').where('file_path', '=', filePath).executeTakeFirst()) !== undefined);
  }

  query(filter: QueryFilter, options: QueryOptions = {}): AsyncIterable<FileRecord> {
    return this.dialect.cursorStreaming ? this.cursorRows(filter, options) : this.keysetPages(filter, options);
  }

  /** One statement read through a server-side cursor, QUERY_PAGE_SIZE rows per round trip. */
  private async *cursorRows(filter: QueryFilter, options: QueryOptions): AsyncIterable<FileRecord> {
    let q = this.ordered(filter, options.sort ?? DEFAULT_SORT, options.after);
    if (options.limit !== undefined) q = q.limit(options.limit);
    for await (const row of q.stream(QUERY_PAGE_SIZE)) yield toRecord(row);
  }

  /**
   * Keyset paging: each round trip asks for the next QUERY_PAGE_SIZE rows after the
   * last one seen, in (sort key, file_path) order, so no connection or cursor is held
   * between pages and memory stays flat however many records match.
   */
  private async *keysetPages(filter: QueryFilter, options: QueryOptions): AsyncIterable<FileRecord> {
    const sort = options.sort ?? DEFAULT_SORT;
    let after = options.after;
    let remaining = options.limit ?? Infinity;
    while (remaining > 0) {
      const pageSize = Math.min(QUERY_PAGE_SIZE, remaining);
      const rows = await this.page(filter, sort, after, pageSize).execute();
      for (const row of rows) yield toRecord(row);
      if (rows.length < pageSize) return;
      remaining -= rows.length;
      after = positionOf(toRecord(rows[rows.length - 1]!), sort);
    }
  }

  /** One page of a query, in (sort key, file_path) order after `after`. */
  private page(filter: QueryFilter, sort: QuerySort, after: QueryPosition | undefined, size: number) {
    return this.ordered(filter, sort, after).limit(size);
  }

  /** The matching rows in (sort key, file_path) order, from just after `after`. */
  private ordered(filter: QueryFilter, sort: QuerySort, after: QueryPosition | undefined) {
    return orderedFiles(this.db, filter, sort, after);
  }

  /** The database's plan for a query's first page (EXPLAIN), to check that it uses the indexes. */
  async explain(filter: QueryFilter, options: QueryOptions = {}): Promise<string[]> {
    const compiled = this.page(filter, options.sort ?? DEFAULT_SORT, options.after, options.limit ?? QUERY_PAGE_SIZE).compile();
    const sqlite = this.dialect.engine === 'sqlite';
    const result = await this.db.executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(`${sqlite ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${compiled.sql}`, [...compiled.parameters]),
    );
    return result.rows.map((row) => String(sqlite ? row.detail : Object.values(row)[0]));
  }

  count(filter: QueryFilter): Promise<number> {
    return this.driver('count', async () => {
      const row = await applyFilter(this.db.selectFrom('files'), filter)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    });
  }

  /** Groups in (instrument, data_level, start_date) order, keyset-paged like query. */
  coverage(filter: QueryFilter): AsyncIterable<CoverageDay> {
    let turn = 0;
    return coverageDays((text, params) => this.driver('coverage', () => this.rowsOf(text, params, turn++)), filter, QUERY_PAGE_SIZE);
  }

  /**
   * A statement of `?` placeholders (filter-sql.ts), its rows as arrays in column order.
   * `turn`: how many statements its request ran before (SQLite's reading threads order by it).
   */
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- used by SQLite's override
  protected async rowsOf(text: string, params: unknown[], turn = 0): Promise<unknown[][]> {
    const sqlText = this.dialect.engine === 'postgres' ? numbered(text) : text;
    const result = await this.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(sqlText, params));
    return result.rows.map((row) => Object.values(row));
  }

  /** Keyset pages on every backend: a long reconcile then holds no cursor (nor snapshot) open. */
  async *paths(): AsyncIterable<string> {
    for await (const record of this.keysetPages({}, {})) yield record.file_path;
  }

  /** The API keys, kept in the same database. */
  keys(): KeyStore {
    return new KyselyKeyStore(this.db);
  }

  /** Leases on names, in the same database. */
  leases(): NameLeases {
    return new KyselyNameLeases(this.db, this.dialect, (operation, work) => this.driver(operation, work));
  }

  ping(): Promise<void> {
    return this.driver('ping', async () => {
      await this.db.selectFrom('files').select('file_path').limit(1).execute();
    });
  }

  /**
   * A call to the database whose driver failure (locked, corrupt, full, connection lost) is
   * reported as SDC_BACKEND_FAILED with the driver's error as its cause (a full disk is still
   * recognised through it); streamed answers end their stream instead.
   */
  protected driver<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return work().catch((err: unknown) => {
      throw backendFailure(this.dialect.engine === 'sqlite' ? 'SQLite catalog' : 'PostgreSQL catalog', operation, err);
    });
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

function toRecord(row: Omit<Selectable<FilesTable>, 'is_latest'>): FileRecord {
  return {
    file_path: row.file_path,
    instrument: row.instrument,
    data_level: row.data_level,
    descriptor: row.descriptor,
    start_date: row.start_date,
    end_date: row.end_date,
    version: row.version,
    extension: row.extension,
    ingestion_date: row.ingestion_date,
    size: Number(row.size),
    sha256: row.sha256,
    ...(row.uploader ? { uploader: row.uploader } : {}),
  };
}
