import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { backendFailure } from '../../errors/index.js';
import type { CatalogDialect } from '../catalog-dialect.js';
import type { FileRecord } from '../file-record.js';
import { numbered, pageSql, whereOf } from '../filter-sql.js';
import { keyIdOf, keyMatches, verdictOf, type KeyCheck, type KeyStore } from '../key-store.js';
import { KyselyCatalog, QUERY_PAGE_SIZE } from '../kysely-catalog.js';
import { KyselyKeyStore } from '../kysely-key-store.js';
import type { QueryFilter } from '../query-filter.js';
import { DEFAULT_SORT, type QueryOptions, type QueryPosition } from '../query-options.js';
import { RecordPages } from '../record-pages.js';
import { RECORD_COLUMNS as COLUMNS, recordOfRow as toRecord, type RecordRow as Row } from '../record-row.js';
import type { CatalogDatabase } from '../schema.js';
import { analyzeAfterLoad, postgresBulkLoad, refreshProductsOf } from './postgres-bulk-load.js';

/**
 * A named statement: pg prepares it once on each pooled connection and then only binds and
 * executes (no parse or plan per request). The name is derived from the text, so one name
 * never means two texts.
 */
function named(text: string, values: unknown[]): pg.QueryConfig & { rowMode: 'array' } {
  return { name: `sdc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, values, rowMode: 'array' };
}

/** Rows per INSERT of a bulk load: one array parameter per column, so any number fits. */
const UNNEST_ROWS = 5000;

const INSERT_UNNEST = `INSERT INTO files (${COLUMNS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[])
  ON CONFLICT DO NOTHING`;

/**
 * The PostgreSQL catalog's hot reads (record by path, query pages, counts, key checks) as
 * prepared statements, one per filter shape, built from the same SQL as SQLite's
 * (filter-sql.ts), rows as arrays; no Kysely query building or compiling per request.
 * Queries are read in keyset pages (as reconcile's walk already is), so a slow reader holds
 * no connection between pages. Bulk loads are one INSERT from unnest() per 5000 rows; other
 * writes, coverage and migrations stay with Kysely.
 */
export class PostgresCatalog extends KyselyCatalog {
  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly pool: pg.Pool,
    onClose: () => Promise<void>,
    dialect: CatalogDialect,
  ) {
    super(db, onClose, dialect);
  }

  private async rows<T>(text: string, values: unknown[]): Promise<T[]> {
    const result = await this.pool.query(named(numbered(text), values)).catch((err: unknown) => {
      throw backendFailure('PostgreSQL catalog', 'read', err);
    });
    return result.rows as T[];
  }

  override async get(filePath: string): Promise<FileRecord | undefined> {
    const [row] = await this.rows<Row>(`SELECT ${COLUMNS} FROM files WHERE file_path = ?`, [filePath]);
    return row && toRecord(row);
  }

  override async has(filePath: string): Promise<boolean> {
    return (await this.rows<[number]>('SELECT 1 FROM files WHERE file_path = ?', [filePath])).length > 0;
  }

  override async count(filter: QueryFilter): Promise<number> {
    const params: unknown[] = [];
    const where = whereOf(filter, params);
    const [row] = await this.rows<[string | number]>(`SELECT count(*) FROM files${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params);
    return Number(row![0]);
  }

  override query(filter: QueryFilter, options: QueryOptions = {}): RecordPages {
    const sort = options.sort ?? DEFAULT_SORT;
    const limit = options.limit ?? Infinity;
    const page = async (after: QueryPosition | undefined, size: number): Promise<FileRecord[]> => {
      const { text, params } = pageSql(COLUMNS, filter, sort, after, size);
      return (await this.rows<Row>(text, params)).map(toRecord);
    };
    return new RecordPages(async function* () {
      let after = options.after;
      let remaining = limit;
      while (remaining > 0) {
        const size = Math.min(QUERY_PAGE_SIZE, remaining);
        const records = await page(after, size);
        if (records.length > 0) yield records;
        if (records.length < size) return;
        remaining -= records.length;
        const last = records[records.length - 1]!;
        after = { key: last[sort.field], file_path: last.file_path };
      }
    });
  }

  /**
   * Many records in one transaction, UNNEST_ROWS at a time, each chunk one
   * `INSERT ... SELECT FROM unnest(<one array per column>)` with the same ON CONFLICT DO
   * NOTHING as the shared insertMany (a path already there, or twice in the load, is left as
   * it is; the count of new ones returned): 12 parameters a statement however many rows,
   * instead of Kysely building and sending 12 per row. Sorted by path, so the primary key's
   * B-tree is filled in order.
   */
  override insertMany(records: readonly FileRecord[]): Promise<number> {
    if (records.length === 0) return Promise.resolve(0);
    return this.driver('insert', async () => {
      const sorted = [...records].sort((a, b) => (a.file_path < b.file_path ? -1 : a.file_path > b.file_path ? 1 : 0));
      const client = await this.pool.connect();
      let inserted = 0;
      let broken = false;
      try {
        await client.query('BEGIN');
        for (let i = 0; i < sorted.length; i += UNNEST_ROWS) {
          const chunk = sorted.slice(i, i + UNNEST_ROWS);
          const columns: unknown[][] = Array.from({ length: 12 }, () => new Array<unknown>(chunk.length));
          chunk.forEach((r, j) => {
            columns[0]![j] = r.file_path;
            columns[1]![j] = r.instrument;
            columns[2]![j] = r.data_level;
            columns[3]![j] = r.descriptor;
            columns[4]![j] = r.start_date;
            columns[5]![j] = r.end_date;
            columns[6]![j] = r.version;
            columns[7]![j] = r.extension;
            columns[8]![j] = r.ingestion_date;
            columns[9]![j] = r.size;
            columns[10]![j] = r.sha256;
            columns[11]![j] = r.uploader ?? null;
          });
          const result = await client.query(named(INSERT_UNNEST, columns));
          inserted += result.rowCount ?? 0;
        }
        if (inserted > 0) await refreshProductsOf(client, sorted);
        await client.query('COMMIT');
      } catch (err) {
        broken = await client.query('ROLLBACK').then(() => false, () => true);
        client.release(broken);
        throw err;
      }
      // Only an optimization: the records are committed whatever becomes of it.
      try {
        await analyzeAfterLoad(client, inserted);
      } catch {
        broken = true;
      }
      client.release(broken);
      return inserted;
    });
  }

  /** COPY through a staging table, indexes built once for a load larger than the table (postgres-bulk-load.ts). */
  override bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
    return postgresBulkLoad(this.pool, records);
  }

  override keys(): KeyStore {
    return new PostgresKeyStore(this.db, this.pool);
  }
}

/** Key checks as a prepared statement; every check reads the database (a revoked key is refused at once). */
class PostgresKeyStore extends KyselyKeyStore {
  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly pool: pg.Pool,
  ) {
    super(db);
  }

  override async check(presented: string): Promise<KeyCheck> {
    const keyId = keyIdOf(presented);
    if (keyId === undefined) return { kind: 'invalid' };
    const { rows } = await this.pool.query(named('SELECT name, key_hash, revoked_at FROM api_keys WHERE key_id = $1', [keyId])).catch((err: unknown) => {
      throw backendFailure('PostgreSQL catalog', 'key check', err);
    });
    const row = rows[0] as [string, string, string | null] | undefined;
    if (!row || !keyMatches(presented, row[1])) return { kind: 'invalid' };
    return verdictOf(row[0], row[2]);
  }
}
