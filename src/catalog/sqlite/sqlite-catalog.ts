import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database, { type Statement } from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { SQLITE_DIALECT } from '../catalog-dialect.js';
import type { KyselyCatalog } from '../kysely-catalog.js';
import { migrateToLatest } from '../migrations.js';
import type { CatalogDatabase } from '../schema.js';
import { analyzeIfStale, SqliteCatalog } from './sqlite-prepared-reads.js';
import { SqliteReadPool } from './sqlite-read-pool.js';

/** Page size of a newly created catalog file, in bytes. */
export const NEW_CATALOG_PAGE_SIZE = 16_384;

/**
 * The embedded catalog: one SQLite file. WAL lets readers run beside the writer;
 * synchronous=FULL makes a committed insert survive a crash or power loss, so a PUT
 * that was acknowledged always has its record.
 */
export async function openSqliteCatalog(file: string, onMigrated?: (applied: readonly string[]) => void): Promise<KyselyCatalog> {
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
    const applied = await migrateToLatest(db as Kysely<unknown>, SQLITE_DIALECT);
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
  return new SqliteCatalog(db, reader, close, SQLITE_DIALECT, sqlite, pool);
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

/** Prepared statements kept per SQL text: a query shape is compiled by SQLite once, not per request. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * The database as Kysely sees it, with `prepare` remembering statements (LRU).
 * Kysely runs one query at a time on this connection, so a statement is never
 * used twice at once.
 */
function withStatementCache(sqlite: Database.Database): Database.Database {
  const cache = new Map<string, Statement>();
  const prepare = (source: string): Statement => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = sqlite.prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(sqlite, {
    get: (target, key) => {
      if (key === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
