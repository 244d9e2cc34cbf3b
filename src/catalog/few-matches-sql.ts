import { dayRowsCountSql } from './coverage-sql.js';
import { pageSql } from './filter-sql.js';
import type { QueryFilter } from './query-filter.js';
import type { QueryPosition, QuerySort } from './query-options.js';

/*
 * PostgreSQL plans a page in path order (`ORDER BY file_path LIMIT n`) of a filter on one
 * product's days as a walk of the primary key that tests every row, taking the matches to be
 * spread over the path order. They are not: a path begins with its instrument, level and year
 * (docs/api.md "File names and stored paths"), so the walk reads every path that sorts before
 * the product's: 1.3M rows for a year of mag l2 at 2M records (750 ms), ~5x that at 10M, where
 * the filter's own index (files_instrument_level_start) and a sort of the matches take ~1 ms
 * (docs/performance.md, "A large load leaves its tables all-visible"). No statistic tells the
 * planner this; coverage_days does: its day rows count the matches (dayRowsCountSql). So such a
 * page is one statement of two branches, each gated by that count (a one-time filter: only one
 * branch runs): many matches, the walk as before (they are then dense along the path order
 * from the first); few, the same page with an ORDER BY no index gives, so the matches are
 * fetched by the filter's index and sorted.
 */

/** At most this many matches are sorted: a few milliseconds of sort, where the walk's cost has no bound. */
export const FEW_MATCHES = 20_000;

/**
 * Whether a page gets the gate: path order, and a filter on one instrument's level and a span
 * of start dates (the index files_instrument_level_start holds exactly these) that
 * coverage_days counts (fromDayRows, within dayRowsCountSql), so the count reads few day rows.
 */
export function sortsFewMatches(filter: QueryFilter, sort: QuerySort): boolean {
  return (
    sort.field === 'file_path' &&
    filter.instrument !== undefined &&
    filter.data_level !== undefined &&
    (filter.start_date !== undefined || filter.end_date !== undefined) &&
    dayRowsCountSql(filter) !== undefined
  );
}

/** The page of pageSql, gated as above; for a filter sortsFewMatches accepts. `?` placeholders, as filter-sql.ts. */
export function fewMatchesPageSql(
  columns: string,
  filter: QueryFilter,
  sort: QuerySort,
  after: QueryPosition | undefined,
  size: number,
): { readonly text: string; readonly params: unknown[] } {
  const count = dayRowsCountSql(filter)!;
  const direction = sort.descending ? 'DESC' : 'ASC';
  // The walk starts at the product's paths (filter-sql.ts, pathRangeWhere); the sort reads the
  // filter's index, which the range would have the planner leave for a walk of the product.
  const branch = (op: '>' | '<=', order: string, range: boolean) => {
    const page = pageSql(columns, filter, sort, after, size, range);
    // pageSql's text ends `ORDER BY files.file_path <direction> LIMIT ?`; the gate goes before its ORDER BY.
    const select = page.text.slice(0, page.text.lastIndexOf(' ORDER BY '));
    const gate = `${select.includes(' WHERE ') ? ' AND' : ' WHERE'} (${count.text}) ${op} ?`;
    return {
      text: `SELECT * FROM (${select}${gate} ORDER BY ${order} ${direction} LIMIT ?) AS ${op === '>' ? 'walked' : 'sorted'}`,
      params: [...page.params.slice(0, -1), ...count.params, FEW_MATCHES, size],
    };
  };
  const walked = branch('>', 'files.file_path', true);
  const sorted = branch('<=', "files.file_path || ''", false);
  // The outer ORDER BY sorts the one branch's page again (at most `size` rows): the order is then the statement's own.
  return { text: `${walked.text} UNION ALL ${sorted.text} ORDER BY file_path ${direction}`, params: [...walked.params, ...sorted.params] };
}
