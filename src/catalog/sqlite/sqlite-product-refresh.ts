import type { Database, Statement } from 'better-sqlite3';
import type { FileRecord } from '../file-record.js';
import { distinctProducts, REFRESH_ALL_SQL, refreshStatements } from '../product-refresh.js';

/**
 * The latest flags and coverage rows (product-refresh.ts) brought up to date on an SQLite
 * connection, synchronously, inside the caller's write transaction: for the products of some
 * records (each an index seek), or for the whole table (a load that outgrew it).
 */
export function sqliteRefresher(db: Database, prepare: (source: string) => Statement = (source) => db.prepare(source)) {
  return {
    products(records: readonly FileRecord[]): void {
      for (const { text, params } of refreshStatements(distinctProducts(records))) prepare(text).run(params);
    },
    all(): void {
      for (const text of REFRESH_ALL_SQL) db.exec(text);
    },
  };
}
