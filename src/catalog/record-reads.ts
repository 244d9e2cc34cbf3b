import { dayRowsCountSql } from './coverage-sql.js';
import { fewMatchesPageSql, sortsFewMatches } from './few-matches-sql.js';
import { pageSql, whereOf } from './filter-sql.js';
import { keysetPages, QUERY_PAGE_SIZE } from './keyset-pages.js';
import type { QueryFilter } from './query-filter.js';
import { DEFAULT_SORT, positionOf, type QueryOptions, type QueryPosition } from './query-options.js';
import { RECORD_COLUMN_LIST, recordOfRow } from './record-columns.js';
import { RecordPages } from './record-pages.js';

/*
 * The catalog's reads as SQL text (`?` placeholders, filter-sql.ts), written once for both
 * engines; each engine only runs a statement its own way (SqlCatalog.rowsOf: SQLite's
 * prepared statements and reading threads, PostgreSQL's named statements).
 */

/** Runs one read statement; its rows as arrays in column order. `turn`: statements its request ran before. */
export type ReadRows = (text: string, params: unknown[], turn: number) => Promise<unknown[][]>;

/** The record of a path (the columns of RECORD_COLUMN_LIST), by the primary key. */
export const RECORD_BY_PATH_SQL = `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE file_path = ?`;

/** Whether a path has a record: answered from the path's own index, no table row read. */
export const PATH_EXISTS_SQL = 'SELECT 1 FROM files WHERE file_path = ?';

/** How many records match a filter: one row, one column. */
export function countSql(filter: QueryFilter): { readonly text: string; readonly params: unknown[] } {
  const fromDays = dayRowsCountSql(filter);
  if (fromDays) return fromDays;
  const params: unknown[] = [];
  const where = whereOf(filter, params);
  return { text: `SELECT count(*) FROM files${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params };
}

/** The columns a page of a query selects: the record's, or (`json`) its JSON text, then where the next page starts. */
function pageColumns(json: string | undefined, sortField: string): string {
  return json === undefined ? RECORD_COLUMN_LIST : `${json}, file_path, ${sortField}`;
}

/**
 * The statement of a query's first page as the engine serves it: what `explain()` plans.
 * With `json` (an engine that writes the JSON text, SqlCatalog's dialect), the JSON form that
 * GET /query's JSON and NDJSON answers read. `fewMatches`: PostgreSQL's pages of one product's
 * days are gated by their count (few-matches-sql.ts).
 */
export function firstPageSql(filter: QueryFilter, options: QueryOptions, json: string | undefined, fewMatches = false): { readonly text: string; readonly params: unknown[] } {
  const sort = options.sort ?? DEFAULT_SORT;
  return pageOf(fewMatches)(pageColumns(json, sort.field), filter, sort, options.after, Math.min(options.limit ?? Infinity, QUERY_PAGE_SIZE));
}

/** pageSql, or, with `fewMatches` (PostgreSQL) and a filter it serves, its gated form (few-matches-sql.ts). */
function pageOf(fewMatches: boolean): typeof pageSql {
  return (columns, filter, sort, after, size) => (fewMatches && sortsFewMatches(filter, sort) ? fewMatchesPageSql : pageSql)(columns, filter, sort, after, size);
}

/**
 * A query's records in (sort key, file_path) order, a keyset page per statement; with `json`,
 * the same pages can also be read as the JSON texts the engine writes (RecordPages.jsonPages).
 */
export function queryRecords(read: ReadRows, filter: QueryFilter, options: QueryOptions, json: string | undefined, fewMatches = false): RecordPages {
  const sort = options.sort ?? DEFAULT_SORT;
  // Pages read so far: a long stream's later pages give way to other requests' first statements.
  let turn = 0;
  const page = (columns: string, after: QueryPosition | undefined, size: number) => {
    const { text, params } = pageOf(fewMatches)(columns, filter, sort, after, size);
    return read(text, params, turn++);
  };
  const records = () =>
    keysetPages(
      async (after: QueryPosition | undefined, size) => (await page(RECORD_COLUMN_LIST, after, size)).map(recordOfRow),
      (last) => positionOf(last, sort),
      options.after,
      options.limit,
    );
  if (json === undefined) return new RecordPages(records);
  const columns = pageColumns(json, sort.field);
  return new RecordPages(records, async function* () {
    // [json, file_path, sort key]: the text to send and where the next page starts.
    const pages = keysetPages(
      (after: QueryPosition | undefined, size) => page(columns, after, size),
      (last) => ({ key: String(last[2]), file_path: String(last[1]) }),
      options.after,
      options.limit,
    );
    for await (const rows of pages) yield rows.map((row) => String(row[0]));
  });
}

/** Every file_path in order, a keyset page per statement, no record built (reconcile's walk). */
export async function* allPaths(read: ReadRows): AsyncIterable<string> {
  let turn = 0;
  const pages = keysetPages(
    async (after: string | undefined, size) => {
      const rows = after === undefined
        ? await read('SELECT file_path FROM files ORDER BY file_path LIMIT ?', [size], turn++)
        : await read('SELECT file_path FROM files WHERE file_path > ? ORDER BY file_path LIMIT ?', [after, size], turn++);
      return rows.map((row) => String(row[0]));
    },
    (last) => last,
  );
  for await (const page of pages) yield* page;
}
