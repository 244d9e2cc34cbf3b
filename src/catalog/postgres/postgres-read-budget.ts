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
 * The pool PostgresCatalog is handed: its one-shot `query` calls, which are all reads (query
 * pages, counts, coverage, point reads, key checks), run on the budgeted pool; `connect()`
 * checkouts (batched inserts, COPY bulk loads) on the unbudgeted one, so that no write is cut.
 */
export function budgetedQueries(writes: pg.Pool, reads: pg.Pool): pg.Pool {
  const query = (config: pg.QueryConfig) => reads.query(config).catch((err: unknown) => Promise.reject(outOfTimeOr(err)));
  writes.query = query as unknown as pg.Pool['query'];
  return writes;
}
