import { PostgresDriver, type CompiledQuery, type DatabaseConnection, type Driver, type QueryCompiler, type QueryResult, type TransactionSettings } from 'kysely';
import type pg from 'pg';
import { OUT_OF_TIME, raise } from '../../errors/index.js';

/**
 * The longest one anonymous read statement may run on PostgreSQL, as on SQLite's reading
 * threads (sqlite-read-pool.ts): past it PostgreSQL cancels the statement and the request is
 * answered SDC_OUT_OF_TIME (503, Retry-After). Reads are paged (1000 rows a statement), so only
 * a page or a count that scans this long is stopped (docs/performance.md, "Time budget").
 */
export const READ_BUDGET_MS = 15_000;

/** The catalog URL's parameter that sets the read budget in ms (docs/deploy.md); pg never sees it. */
export const READ_BUDGET_PARAMETER = 'read_budget_ms';

/** Seconds a client told SDC_OUT_OF_TIME waits before asking again (as on SQLite). */
const RETRY_AFTER_S = '30';

/** The read budget a catalog URL asks for, and the connection string without that parameter. */
export function readBudgetOf(connectionString: string): { budgetMs: number; connectionString: string } {
  const url = new URL(connectionString);
  const given = url.searchParams.get(READ_BUDGET_PARAMETER);
  if (given === null) return { budgetMs: READ_BUDGET_MS, connectionString };
  const budgetMs = Number(given);
  if (!Number.isInteger(budgetMs) || budgetMs <= 0) {
    throw new Error(`SDC_CATALOG ${READ_BUDGET_PARAMETER}=${given} is not valid; expected a whole number of milliseconds (default ${READ_BUDGET_MS})`);
  }
  url.searchParams.delete(READ_BUDGET_PARAMETER);
  return { budgetMs, connectionString: url.toString() };
}

/** A statement PostgreSQL cancelled for its statement_timeout (57014 is also a cancel by request: told apart by its text). */
function isStatementTimeout(err: unknown): boolean {
  return (err as { code?: unknown }).code === '57014' && /statement timeout/i.test((err as Error).message);
}

/** The read's failure as the client should see it: SDC_OUT_OF_TIME for a budget spent, else unchanged. */
export function outOfTimeOr(err: unknown): unknown {
  return isStatementTimeout(err) ? raise(OUT_OF_TIME, [], { headers: { 'Retry-After': RETRY_AFTER_S }, cause: err }) : err;
}

/**
 * The pool PostgresCatalog is handed: its one-shot `query` calls, which are all reads (prepared
 * query pages, counts, point reads, key checks), run on the budgeted pool; `connect()` checkouts
 * (batched inserts, COPY bulk loads) on the unbudgeted one, so that no write is cut.
 */
export function budgetedQueries(writes: pg.Pool, reads: pg.Pool): pg.Pool {
  const query = (config: pg.QueryConfig) => reads.query(config).catch((err: unknown) => Promise.reject(outOfTimeOr(err)));
  writes.query = query as unknown as pg.Pool['query'];
  return writes;
}

/** Statements that only read: run with the budget when outside a transaction. */
function isRead(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  return kind === 'SelectQueryNode' || (kind === 'RawNode' && /^\s*(select|explain)\b/i.test(query.sql));
}

/**
 * Kysely's PostgreSQL driver over two pools: a connection is taken from the budgeted pool when
 * its first statement is a read outside a transaction (coverage, pings, listings), from the
 * unbudgeted one for a transaction (every write path and the migrations run in one) or any
 * other statement. It stays on that pool until released.
 */
export class BudgetedReadsDriver implements Driver {
  private readonly reads: PostgresDriver;
  private readonly writes: PostgresDriver;

  constructor(reads: pg.Pool, writes: pg.Pool, cursor: unknown) {
    this.reads = new PostgresDriver({ pool: reads, cursor: cursor as never });
    this.writes = new PostgresDriver({ pool: writes, cursor: cursor as never });
  }

  async init(): Promise<void> {
    await this.reads.init();
    await this.writes.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this.reads, this.writes);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.writes.beginTransaction(await routed(connection).on(this.writes), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.writes.commitTransaction(await routed(connection).on(this.writes));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.writes.rollbackTransaction(await routed(connection).on(this.writes));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.writes.savepoint(await routed(connection).on(this.writes), name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.writes.rollbackToSavepoint(await routed(connection).on(this.writes), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.writes.releaseSavepoint(await routed(connection).on(this.writes), name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await routed(connection).release();
  }

  async destroy(): Promise<void> {
    await Promise.all([this.reads.destroy(), this.writes.destroy()]);
  }
}

function routed(connection: DatabaseConnection): RoutedConnection {
  return connection as RoutedConnection;
}

/** A connection that takes its pooled client on its first statement, from the pool that statement calls for. */
class RoutedConnection implements DatabaseConnection {
  private taken?: Promise<{ driver: PostgresDriver; connection: DatabaseConnection }>;

  constructor(
    private readonly reads: PostgresDriver,
    private readonly writes: PostgresDriver,
  ) {}

  /** The pooled connection, taken from `driver` unless one was taken already (a transaction stays on it). */
  async on(driver: PostgresDriver): Promise<DatabaseConnection> {
    this.taken ??= driver.acquireConnection().then((connection) => ({ driver, connection }));
    return (await this.taken).connection;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const connection = await this.on(isRead(query) ? this.reads : this.writes);
    try {
      return await connection.executeQuery<R>(query);
    } catch (err) {
      throw outOfTimeOr(err);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    const connection = await this.on(isRead(query) ? this.reads : this.writes);
    try {
      yield* connection.streamQuery<R>(query, chunkSize);
    } catch (err) {
      throw outOfTimeOr(err);
    }
  }

  async release(): Promise<void> {
    const taken = this.taken;
    this.taken = undefined;
    // A connection that never came (the pool's own timeout) has nothing to give back.
    const held = await taken?.catch(() => undefined);
    if (held) await held.driver.releaseConnection(held.connection as Parameters<PostgresDriver['releaseConnection']>[0]);
  }
}
