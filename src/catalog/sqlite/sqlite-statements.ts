import type { Database, Statement } from 'better-sqlite3';

/** Prepared statements kept per connection: a query shape is compiled by SQLite once, not per request. */
const STATEMENTS_KEPT = 256;

/**
 * `prepare` that remembers statements by SQL text (a filter shape has one text), the least
 * recently used dropped past STATEMENTS_KEPT.
 */
export function statementCache(db: Database): (source: string) => Statement {
  const cache = new Map<string, Statement>();
  return (source) => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = db.prepare(source);
      if (cache.size >= STATEMENTS_KEPT) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
}

/**
 * The database as Kysely sees it, with `prepare` remembering statements (statementCache).
 * Kysely runs one query at a time on this connection, so a statement is never used twice at
 * once. Its cache is Kysely's alone: the catalog's own reads set their statements to raw
 * (rows as arrays), which Kysely's must not be.
 */
export function withStatementCache(sqlite: Database): Database {
  const prepare = statementCache(sqlite);
  return new Proxy(sqlite, {
    get: (target, key) => {
      if (key === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
