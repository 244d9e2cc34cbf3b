import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { POSTGRES_DIALECT } from '../catalog-dialect.js';
import type { ConnectionPoolUse } from '../catalog.js';
import type { FileRecord } from '../file-record.js';
import type { KeyStore } from '../key-store.js';
import type { MigrateOptions, MigrationPlan } from '../migration-plan.js';
import { migrateToLatest, migrationPlan } from '../migration-runner.js';
import { fieldsRead, recordOfRow } from '../record-columns.js';
import type { RecordField } from '../../wire/record.js';
import { PATH_EXISTS_SQL, RECORD_BY_PATH_SQL } from '../record-reads.js';
import type { CatalogDatabase } from '../schema.js';
import { SqlCatalog } from '../sql-catalog.js';
import { insertManyUnnest } from './postgres-bulk-insert.js';
import { postgresBulkLoad } from './postgres-bulk-load.js';
import { budgetedQueries, readBudgetOf } from './postgres-read-budget.js';
import { PostgresKeyStore } from './postgres-key-store.js';
import { namedShared } from './postgres-statements.js';
import { parsePostgresUrl, redactPassword } from './postgres-url.js';
import { SchemaScopedPostgresDialect } from './schema-scoped-dialect.js';

/** How long a new connection to PostgreSQL may take before the operation fails as unavailable. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The name this process's connections carry in pg_stat_activity: `sdc-data-access`, or the
 * URL's own `application_name` parameter (operators tell instances apart; tests find their own).
 */
function applicationName(url: string): string {
  try {
    return new URL(url).searchParams.get('application_name') ?? 'sdc-data-access';
  } catch {
    return 'sdc-data-access';
  }
}

export interface PostgresCatalogOptions {
  /** Told about connection errors of idle pooled clients (the pool replaces them). */
  readonly onPoolError?: (err: Error) => void;
  /** Told the migrations that opening applied (`sdc migrate` prints them). */
  readonly onMigrated?: (applied: readonly string[]) => void;
  /** Contract steps allowed, or only the plan wanted (`sdc migrate --contract`, `--check`; migration-plan.ts). */
  readonly migrate?: MigrateOptions;
}

/**
 * The catalog on PostgreSQL: a pg pool for Kysely (writes) and a budgeted one for the reads. The
 * schema is created if missing and migrated on open; Kysely's migrator takes an
 * advisory lock, so instances starting together migrate once.
 */
export async function openPostgresCatalog(url: string, options: PostgresCatalogOptions = {}): Promise<PostgresCatalog> {
  const location = parsePostgresUrl(url);
  const { schema } = location;
  const { budgetMs, connectionString } = readBudgetOf(location.connectionString);
  const config: pg.PoolConfig = {
    connectionString,
    // Every connection resolves table names in the configured schema only.
    options: `-c search_path=${schema}`,
    application_name: applicationName(url),
    // A catalog that does not answer a new connection in this time is unavailable (503), not a hang.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A connection whose peer vanished (failover, a cut proxy) is found by the kernel, not by the next query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  // Two pools: the reads run with a statement budget (postgres-read-budget.ts); Kysely (writes,
  // leases, migrations), batched inserts and COPY loads without one, so none is cut half way.
  // The reads without JIT: PostgreSQL compiles a statement whose estimate passes jit_above_cost,
  // counting branches that never run (a count's CASE, few-matches-sql.ts's gate), and the
  // compile cost an "ingested since" count at 10M 290 ms against 110 without it, at load 8
  // (docs/performance.md "Counts that do not read the files").
  const pool = new pg.Pool(config);
  const reads = new pg.Pool({ ...config, options: `${config.options} -c statement_timeout=${budgetMs} -c jit=off` });
  // Without a listener, a connection's network error is an unhandled 'error' event, which ends the
  // process. pg-pool listens on idle clients only ('error' on the pool); a client that is checked
  // out (a transaction, a lease, a COPY) has no listener until it is released. So every
  // client gets one of its own when it connects: the error fails the operation in flight (pg
  // rejects its promise), and the pool drops the broken client when it is released.
  for (const each of [pool, reads]) {
    each.on('error', (err) => options.onPoolError?.(err));
    each.on('connect', (client) => {
      client.on('error', (err) => options.onPoolError?.(err));
    });
  }
  // Kysely's destroy ends its pool; the reads' pool is ended with it.
  const db = new Kysely<CatalogDatabase>({ dialect: new SchemaScopedPostgresDialect({ pool }, schema) });
  const close = async () => {
    await Promise.all([db.destroy(), reads.end()]);
  };
  try {
    await createSchema(db, schema);
    // Migrated first, then told: an optional call (?.) would skip evaluating its argument.
    const applied = await migrateToLatest(db as Kysely<unknown>, POSTGRES_DIALECT, schema, options.migrate);
    options.onMigrated?.(applied);
  } catch (err) {
    await close();
    throw new Error(`cannot open the PostgreSQL catalog ${redactPassword(url)}: ${(err as Error).message}`, { cause: err });
  }
  return new PostgresCatalog(db, budgetedQueries(pool, reads), close, { writes: pool, reads });
}

/** What migrating the schema the URL names would do (`sdc migrate --check`), read without changing it. */
export async function postgresMigrationPlan(url: string): Promise<MigrationPlan> {
  const { connectionString, schema } = parsePostgresUrl(url);
  const pool = new pg.Pool({ connectionString, options: `-c search_path=${schema}`, application_name: applicationName(url), max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  pool.on('error', () => undefined);
  const db = new Kysely<unknown>({ dialect: new SchemaScopedPostgresDialect({ pool }, schema) });
  try {
    return await migrationPlan(db, POSTGRES_DIALECT, schema);
  } catch (err) {
    throw new Error(`cannot read the PostgreSQL catalog ${redactPassword(url)}: ${(err as Error).message}`, { cause: err });
  } finally {
    await db.destroy();
  }
}

/** Kysely's migration table: present once a catalog has been created (by a server, `sdc migrate` or `--create`). */
const MIGRATION_TABLE = 'kysely_migration';

/** Whether the schema the URL names holds a catalog (its migration table), without creating anything. */
export async function postgresCatalogExists(url: string): Promise<boolean> {
  const { connectionString, schema } = parsePostgresUrl(url);
  const client = new pg.Client({ connectionString, application_name: applicationName(url), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // Its failure is the query's, below: the event must not end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ found: string | null }>('select to_regclass($1) as found', [`${schema}.${MIGRATION_TABLE}`]);
    return rows[0]?.found != null;
  } catch (err) {
    throw new Error(`cannot reach the PostgreSQL catalog ${redactPassword(url)}: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function createSchema(db: Kysely<CatalogDatabase>, schema: string): Promise<void> {
  // Looked up first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema
  // exists, which an application user without DDL rights lacks (docs/deploy-aws.md, Database users).
  const found = await sql<{ n: number }>`select 1 as n from pg_namespace where nspname = ${schema}`.execute(db);
  if (found.rows.length > 0) return;
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (err) {
    // Two instances creating it at once: one wins, the other sees a duplicate. Either way it exists.
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw err;
  }
}

/**
 * The PostgreSQL catalog: reads (record by path, query pages, counts, coverage, key checks)
 * as named prepared statements of the shared SQL (record-reads.ts), rows as arrays, in keyset
 * pages, so a slow reader holds no connection between pages; insertMany as INSERTs from
 * unnest() (postgres-bulk-insert.ts), bulk loads by COPY (postgres-bulk-load.ts). Other
 * writes, leases and migrations are the shared Kysely ones (sql-catalog.ts).
 */
export class PostgresCatalog extends SqlCatalog {
  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly pool: pg.Pool,
    onClose: () => Promise<void>,
    /** The pools by name, for /metrics (`pool` above is `writes`, its one-shot queries sent to `reads`). */
    private readonly pools: Readonly<Record<string, pg.Pool>> = { writes: pool },
  ) {
    super(db, onClose, POSTGRES_DIALECT);
  }

  connectionPools(): readonly ConnectionPoolUse[] {
    return Object.entries(this.pools).map(([name, each]) => ({
      pool: name,
      // pg-pool's default when none is configured.
      max: each.options.max ?? 10,
      open: each.totalCount,
      idle: each.idleCount,
      waiting: each.waitingCount,
    }));
  }

  protected async rowsOf(text: string, params: unknown[]): Promise<unknown[][]> {
    return (await this.pool.query(namedShared(text, params))).rows as unknown[][];
  }

  get(filePath: string): Promise<FileRecord | undefined> {
    return this.driver('read', async () => {
      const [row] = await this.rowsOf(RECORD_BY_PATH_SQL, [filePath]);
      return row && recordOfRow(row);
    });
  }

  getFields<F extends RecordField>(filePath: string, fields: readonly F[]): Promise<Pick<FileRecord, F> | undefined> {
    const { text, recordOf } = fieldsRead(fields);
    return this.driver('read', async () => {
      const [row] = await this.rowsOf(text, [filePath]);
      return row && recordOf(row);
    });
  }

  has(filePath: string): Promise<boolean> {
    return this.driver('read', async () => (await this.rowsOf(PATH_EXISTS_SQL, [filePath])).length > 0);
  }

  override insertMany(records: readonly FileRecord[]): Promise<number> {
    return this.driver('insert', () => insertManyUnnest(this.pool, records));
  }

  /** COPY through a staging table, indexes built once for a load larger than the table (postgres-bulk-load.ts). */
  override bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
    return postgresBulkLoad(this.pool, records);
  }

  override keys(): KeyStore {
    return new PostgresKeyStore(this.db, this.pool);
  }
}
