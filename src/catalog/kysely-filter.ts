import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { afterOf, whereOf } from './filter-sql.js';
import type { QueryFilter } from './query-filter.js';
import type { QueryPosition, QuerySort } from './query-options.js';
import type { CatalogDatabase } from './schema.js';

const RECORD_COLUMN_LIST = [
  'files.file_path', 'files.instrument', 'files.data_level', 'files.descriptor', 'files.start_date', 'files.end_date',
  'files.version', 'files.extension', 'files.ingestion_date', 'files.size', 'files.sha256', 'files.uploader',
] as const;

/*
 * The filter's conditions and the keyset position for Kysely queries. The rules themselves
 * (overlap, version=latest, ingestion dates, the (sort key, file_path) order) live once, in
 * filter-sql.ts, which the prepared reads use too; here they only become Kysely expressions.
 */

type FilesQuery<O> = SelectQueryBuilder<CatalogDatabase, 'files', O>;

/** The filter's conditions; each one an indexed comparison where the schema allows. */
export function applyFilter<O>(query: FilesQuery<O>, filter: QueryFilter): FilesQuery<O> {
  const params: unknown[] = [];
  const clauses = whereOf(filter, params);
  return clauses.reduce((q, clause) => q.where(asExpression(clause, params)), query);
}

/** Rows strictly after `after` in (sort key, file_path) order. */
function applyAfter<O>(query: FilesQuery<O>, sort: QuerySort, after: QueryPosition): FilesQuery<O> {
  const params: unknown[] = [];
  return query.where(asExpression(afterOf(sort, after, params), params));
}

/** The matching rows in (sort key, file_path) order, from just after `after`. */
export function orderedFiles(db: Kysely<CatalogDatabase>, filter: QueryFilter, sort: QuerySort, after: QueryPosition | undefined) {
  // The record's columns only (not is_latest): SQLite's search index then covers the query.
  let q = applyFilter(db.selectFrom('files').select(RECORD_COLUMN_LIST), filter);
  if (after) q = applyAfter(q, sort, after);
  const direction = sort.descending ? 'desc' : 'asc';
  if (sort.field !== 'file_path') q = q.orderBy(`files.${sort.field}`, direction);
  return q.orderBy('files.file_path', direction);
}

/**
 * One clause of filter-sql.ts (`?` placeholders) as a Kysely expression, its values taken
 * from the front of `params` in order, so they stay bound parameters.
 */
function asExpression(clause: string, params: unknown[]): RawBuilder<SqlBool> {
  const pieces = clause.split('?');
  const parts: RawBuilder<unknown>[] = [sql.raw(pieces[0]!)];
  for (const piece of pieces.slice(1)) parts.push(sql.val(params.shift()), sql.raw(piece));
  return sql<SqlBool>`(${sql.join(parts, sql.raw(''))})`;
}
