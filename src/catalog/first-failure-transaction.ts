import { sql, type Kysely } from 'kysely';
import { backoffDelay, sleep } from '../concurrency/backoff.js';

/** Further runs of a transaction that PostgreSQL ended as a deadlock's victim. */
const DEADLOCK_RETRIES = 2;

/** PostgreSQL's deadlock_detected (SQLSTATE 40P01): the victim's work is rolled back whole. */
function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

/**
 * A transaction that reports the error that ended it. SQLite rolls a transaction back by
 * itself after some errors (a full disk, SQLITE_FULL, often met only at COMMIT), so a ROLLBACK
 * sent then fails with "no transaction is active"; Kysely's own transaction() would throw that
 * instead and hide the cause, and a full disk must still be recognised as one (507, docs/api.md).
 * The work runs on one connection held for it (PostgreSQL's pool hands out no other).
 *
 * A transaction PostgreSQL chose as a deadlock's victim is run again from its start, at most
 * twice, after a short random wait: the rows' locks are taken in one order where the code
 * knows both (a crossed withdrawal), but two writers of rows in other orders (releases of
 * overlapping sets, the background announcement beside them) may still meet one, and nothing
 * of the victim was kept (docs/reliability.md, "The lifecycle under faults").
 */
export async function transactionReportingCause<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await transactionOnce(db, work);
    } catch (error) {
      if (!isDeadlock(error) || attempt >= DEADLOCK_RETRIES) throw error;
      await sleep(backoffDelay({ baseDelayMs: 20, maxDelayMs: 200 }, attempt));
    }
  }
}

function transactionOnce<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      // Already rolled back by the database when this fails: the first error is the one to report.
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}
