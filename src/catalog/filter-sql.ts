import type { QueryFilter } from './query-filter.js';
import type { QueryPosition, QuerySort } from './query-options.js';
import { archivedSql } from './archived-sql.js';
import { latestWhere, releaseWhere, visibilityWhere } from './visibility-sql.js';

/*
 * A query's SQL text from its filter's shape: the one home of the filter's rules, for the
 * reads of both engines (record-reads.ts, coverage-sql.ts). `?` placeholders (PostgreSQL
 * numbers them, see numbered()), values pushed on `params` in the same order.
 */

/**
 * The WHERE clause of a filter and its parameters. The SQL text depends only on which
 * conditions are present (the filter's shape), never on values, so one prepared statement
 * serves every request of a shape.
 */
export function whereOf(filter: QueryFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const eq = comparisonsOn('files', where, params);
  eq('file_path', filter.file_path);
  eq('instrument', filter.instrument);
  eq('data_level', filter.data_level);
  eq('descriptor', filter.descriptor);
  if (filter.overlap) {
    eq('end_date', filter.start_date, '>=');
    eq('start_date', filter.end_date, '<=');
  } else {
    eq('start_date', filter.start_date, '>=');
    eq('start_date', filter.end_date, '<=');
  }
  if (filter.version === 'latest') {
    where.push(latestWhere(filter, params));
  } else if (filter.version !== '*') {
    eq('version', filter.version);
  }
  eq('extension', filter.extension);
  eq('ingestion_date', filter.ingestion_start_date, '>=');
  eq('ingestion_date', filter.ingestion_end_date, '<=');
  // A release's files, exactly its manifest (docs/api.md "Releases"): a citation answers the same
  // files forever (the query's parser makes status any for it unless status= is sent).
  if (filter.release !== undefined) where.push(releaseWhere(filter, filter.release, params));
  // Withdrawn files are left out unless asked for (docs/api.md "Withdrawn files"); literals, so
  // the partial index files_withdrawn serves status=withdrawn.
  if (filter.status === undefined) where.push(archivedSql('files'));
  else if (filter.status === 'withdrawn') where.push("files.status = 'withdrawn'");
  where.push(...visibilityWhere(filter, params));
  return where;
}

/**
 * A function that adds `table.column op ?` to `where`, and its value to `params`, for a value
 * that is present; an absent one adds nothing, so the text depends only on the filter's shape.
 */
export function comparisonsOn(table: string, where: string[], params: unknown[]) {
  return (column: string, value: string | undefined, op: '=' | '>=' | '<=' = '=') => {
    if (value === undefined) return;
    where.push(`${table}.${column} ${op} ?`);
    params.push(value);
  };
}

/**
 * Whether a filter's reads touch one record at most and nothing besides: it names a path (the
 * primary key) and no release (`release=` reads the release's whole manifest, releaseWhere).
 * An engine may run them as it runs a record's read by path (SqlCatalog.rowsOf).
 */
export function isPointRead(filter: QueryFilter): boolean {
  return filter.file_path !== undefined && filter.release === undefined;
}

/** Rows strictly after `after` in (sort key, file_path) order: the keyset position of a page. */
export function afterOf(sort: QuerySort, after: QueryPosition, params: unknown[]): string {
  const op = sort.descending ? '<' : '>';
  if (sort.field === 'file_path') {
    params.push(after.file_path);
    return `files.file_path ${op} ?`;
  }
  params.push(after.key, after.key, after.file_path);
  return `(files.${sort.field} ${op} ? OR (files.${sort.field} = ? AND files.file_path ${op} ?))`;
}

/**
 * `files.file_path` within the filter's pathPrefix (query-filter.ts): `[prefix, prefix's
 * successor)` in byte order (file_path's collation is "C" on PostgreSQL, binary on SQLite),
 * which both engines read as a range of the primary key. Redundant with the filter's
 * instrument and level, so it changes no answer; a page in path order then walks the
 * instrument's paths only instead of every path that sorts before them (docs/scale.md, "one
 * instrument"). Nothing for a filter without a prefix, or that names its path.
 */
export function pathRangeWhere(filter: QueryFilter, params: unknown[]): string[] {
  const prefix = filter.pathPrefix;
  if (prefix === undefined || prefix === '' || filter.file_path !== undefined) return [];
  // The smallest text above every text that begins with the prefix: its last character's successor.
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  params.push(prefix, end);
  return ['files.file_path >= ?', 'files.file_path < ?'];
}

/**
 * Whether a page gets pathRangeWhere: in path order only, where the walk of the primary key
 * is the plan (in another order the range would only lower the planner's estimate of the
 * matches, as it takes the range and the instrument to be independent), and not for an
 * instrument's level and a span of start dates: files_instrument_level_start serves those, and
 * the planner, which estimates a range of one product's paths at a small part of its rows,
 * then walked the product's paths instead (swe l2, a month, with a descriptor: 10,802 rows
 * read for 11 at 2M, where the index and a sort read 9 buffers; docs/performance.md).
 */
export function walksPathRange(filter: QueryFilter, sort: QuerySort): boolean {
  const span = (filter.start_date !== undefined || filter.end_date !== undefined) && !filter.overlap;
  return sort.field === 'file_path' && !(filter.data_level !== undefined && span);
}

/**
 * One page of a query in its sort order (the path breaks ties), after `after`: the SQL and
 * its parameters, shared by the reads of both engines so the order lives here once.
 */
export function pageSql(
  columns: string,
  filter: QueryFilter,
  sort: QuerySort,
  after: QueryPosition | undefined,
  size: number,
  range = walksPathRange(filter, sort),
): { readonly text: string; readonly params: unknown[] } {
  const params: unknown[] = [];
  const where = whereOf(filter, params);
  // `range`: whether the page takes pathRangeWhere (few-matches-sql.ts chooses per branch).
  if (range) where.push(...pathRangeWhere(filter, params));
  if (after) where.push(afterOf(sort, after, params));
  const direction = sort.descending ? 'DESC' : 'ASC';
  const order = sort.field === 'file_path' ? `files.file_path ${direction}` : `files.${sort.field} ${direction}, files.file_path ${direction}`;
  params.push(size);
  return { text: `SELECT ${columns} FROM files${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`, params };
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`, ... (the SQL built here has no other `?`). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
