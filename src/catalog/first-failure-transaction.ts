import { sql, type Kysely } from 'kysely';

/**
 * A transaction that reports the error that ended it. SQLite rolls a transaction back by
 * itself after some errors (a full disk, SQLITE_FULL, often met only at COMMIT), so a ROLLBACK
 * sent then fails with "no transaction is active"; Kysely's own transaction() would throw that
 * instead and hide the cause, and a full disk must still be recognised as one (507, docs/api.md).
 * The work runs on one connection held for it (PostgreSQL's pool hands out no other).
 */
export function transactionReportingCause<DB, T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
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
