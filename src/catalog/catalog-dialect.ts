import type { ChangeJsonDialect } from './change-pages.js';
import type { PostWrite } from './post-write.js';
import { postgresPostWrite } from './postgres/postgres-post-write.js';
import { sqliteJsonRecord } from './sqlite/sqlite-json-record.js';
import { sqlitePostWrite } from './sqlite/sqlite-post-write.js';

/**
 * The few places where SQL backends differ, as data the shared code reads. Each
 * adapter passes its own; the queries and migrations stay written once.
 */
export interface CatalogDialect {
  /** Which engine this is, where a statement must say so. */
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Collation that compares text byte by byte, for file_path. SQLite's default
   * (BINARY) already does; PostgreSQL's default follows the database locale
   * (en_US.UTF-8 sorts `hi-45` after `hit`), so it names `C`. Queries are "ordered by
   * file_path", and the order must be the same on every backend.
   */
  readonly byteOrderCollation?: string;
  /**
   * A record row's JSON text written by the database, exactly JSON.stringify's (SQLite's
   * json_object): query pages can then be sent without making a record (RecordPages.jsonPages).
   */
  readonly jsonRecord?: string;
  /** How the engine writes a change-log entry's JSON text (change-pages.ts). */
  readonly changeJson: ChangeJsonDialect;
  /** How the database shows a statement's plan: the prefix, and which column of its rows is the text. */
  readonly plan: { readonly prefix: string; readonly column: number };
  /** The engine's post-write step (post-write.ts), which every write of the files table ends with. */
  readonly postWrite: PostWrite;
}

export const SQLITE_DIALECT: CatalogDialect = Object.freeze({
  engine: 'sqlite',
  jsonRecord: sqliteJsonRecord(),
  // json_quote escapes as JSON.stringify does (sqlite-json-record.ts); concat() since SQLite 3.44.
  changeJson: { jsonString: (column: string) => `json_quote(${column})` },
  // Rows of (id, parent, notused, detail).
  plan: { prefix: 'EXPLAIN QUERY PLAN', column: 3 },
  postWrite: sqlitePostWrite,
});

export const POSTGRES_DIALECT: CatalogDialect = Object.freeze({
  engine: 'postgres',
  byteOrderCollation: 'C',
  // to_json(text) escapes as JSON.stringify does (postgres-json-record.ts).
  changeJson: { jsonString: (column: string) => `to_json(${column})` },
  plan: { prefix: 'EXPLAIN', column: 0 },
  postWrite: postgresPostWrite,
});
