import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { backendFailure } from '../../errors/index.js';
import type { CatalogDialect } from '../catalog-dialect.js';
import type { FileRecord } from '../file-record.js';
import { afterOf, numbered, whereOf } from '../filter-sql.js';
import { hashKey, keyIdOf, sameHash, type KeyCheck, type KeyStore } from '../key-store.js';
import { KyselyCatalog, QUERY_PAGE_SIZE } from '../kysely-catalog.js';
import { KyselyKeyStore } from '../kysely-key-store.js';
import type { QueryFilter } from '../query-filter.js';
import { DEFAULT_SORT, type QueryOptions, type QueryPosition } from '../query-options.js';
import { RecordPages } from '../record-pages.js';
import { RECORD_COLUMNS as COLUMNS, recordOfRow as toRecord, type RecordRow as Row } from '../record-row.js';
import type { CatalogDatabase } from '../schema.js';

/**
 * A named statement: pg prepares it once on each pooled connection and then only binds and
 * executes (no parse or plan per request). The name is derived from the text, so one name
 * never means two texts.
 */
function named(text: string, values: unknown[]): pg.QueryConfig & { rowMode: 'array' } {
  return { name: `sdc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, values, rowMode: 'array' };
}

/**
 * The PostgreSQL catalog's hot reads (record by path, query pages, counts, key checks) as
 * prepared statements, one per filter shape, built from the same SQL as SQLite's
 * (filter-sql.ts), rows as arrays; no Kysely query building or compiling per request.
 * Queries are read in keyset pages (as reconcile's walk already is), so a slow reader holds
 * no connection between pages. Writes, coverage and migrations stay with Kysely.
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
      const params: unknown[] = [];
      const where = whereOf(filter, params);
      if (after) where.push(afterOf(sort, after, params));
      const direction = sort.descending ? 'DESC' : 'ASC';
      const order = sort.field === 'file_path' ? `files.file_path ${direction}` : `files.${sort.field} ${direction}, files.file_path ${direction}`;
      params.push(size);
      const text = `SELECT ${COLUMNS} FROM files${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`;
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
    if (!row || !sameHash(hashKey(presented), row[1])) return { kind: 'invalid' };
    return row[2] ? { kind: 'revoked', name: row[0], revokedAt: row[2] } : { kind: 'valid', name: row[0] };
  }
}
