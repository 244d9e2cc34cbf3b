/**
 * The few places where SQL backends differ, as data the shared code reads. Each
 * adapter passes its own; the queries and migrations stay written once.
 */
export interface CatalogDialect {
  /** Which engine this is, where a statement must say so (the plan of a query: EXPLAIN QUERY PLAN or EXPLAIN). */
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Collation that compares text byte by byte, for file_path. SQLite's default
   * (BINARY) already does; PostgreSQL's default follows the database locale
   * (en_US.UTF-8 sorts `hi-45` after `hit`), so it names `C`. Queries are "ordered by
   * file_path", and the order must be the same on every backend.
   */
  readonly byteOrderCollation?: string;
  /**
   * Stream a query's rows through one server-side cursor instead of keyset pages.
   * PostgreSQL does (pg-cursor); SQLite cannot, as Kysely runs SQLite on one
   * connection that a slow reader would hold.
   */
  readonly cursorStreaming?: boolean;
}

export const SQLITE_DIALECT: CatalogDialect = Object.freeze({ engine: 'sqlite' });

export const POSTGRES_DIALECT: CatalogDialect = Object.freeze({ engine: 'postgres', byteOrderCollation: 'C', cursorStreaming: true });
