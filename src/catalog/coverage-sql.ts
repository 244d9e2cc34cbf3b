import type { CoverageDay } from './coverage-day.js';
import { comparisonsOn, whereOf } from './filter-sql.js';
import { keysetPages } from './keyset-pages.js';
import type { QueryFilter } from './query-filter.js';

/*
 * GET /coverage's groups (instrument, data level, start date) as SQL, keyset-paged. A filter
 * that only names instruments, levels, a span of start dates and `version` (any, or latest)
 * is answered from coverage_days, kept at ingest (product-refresh.ts): its cost is the
 * answer's days, not the archive's files. Any other filter groups the matching files.
 * `?` placeholders, as filter-sql.ts.
 */

/** Where a page of days starts: just after this (instrument, data_level, start_date). */
export type CoverageAfter = readonly [string, string, string];

/** Whether coverage_days answers this filter. */
export function fromDayRows(filter: QueryFilter): boolean {
  const dates = filter.start_date !== undefined || filter.end_date !== undefined;
  return (
    filter.file_path === undefined &&
    filter.descriptor === undefined &&
    filter.extension === undefined &&
    filter.ingestion_start_date === undefined &&
    filter.ingestion_end_date === undefined &&
    // coverage_days holds the archived files only (product-refresh.ts).
    filter.status === undefined &&
    // coverage_days counts every file: a reader without a key, or released=, groups the files (visibility-sql.ts).
    filter.audience === undefined &&
    filter.released === undefined &&
    // A release's manifest is a set of files the day rows know nothing of (release_files).
    filter.release === undefined &&
    (filter.version === undefined || filter.version === '*' || filter.version === 'latest') &&
    !(filter.overlap && dates)
  );
}

/** The WHERE clause over coverage_days of a filter fromDayRows accepts (its days with files, or with latest files). */
function dayRowsWhere(filter: QueryFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const eq = comparisonsOn('coverage_days', where, params);
  eq('instrument', filter.instrument);
  eq('data_level', filter.data_level);
  eq('start_date', filter.start_date, '>=');
  eq('start_date', filter.end_date, '<=');
  if (filter.version === 'latest') where.push('coverage_days.latest_files > 0');
  return where;
}

/**
 * How many records a filter fromDayRows accepts matches, summed from coverage_days (the files,
 * or latest files, of each day): X-Total-Count then costs the filter's days, not its files
 * (docs/performance.md, "A catalog of 10M records"). Undefined for any other filter.
 */
export function dayRowsCountSql(filter: QueryFilter): { text: string; params: unknown[] } | undefined {
  if (!fromDayRows(filter)) return undefined;
  const params: unknown[] = [];
  const where = dayRowsWhere(filter, params);
  const column = filter.version === 'latest' ? 'latest_files' : 'files';
  return { text: `SELECT coalesce(sum(coverage_days.${column}), 0) FROM coverage_days${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params };
}

/** One page of days after `after`, columns instrument, data_level, start_date, end_date, files, size. */
export function coveragePageSql(filter: QueryFilter, after: CoverageAfter | undefined, size: number): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let text: string;
  let groupBy = '';
  let where: string[];
  const position = (table: string) => {
    if (!after) return;
    where.push(`(${table}.instrument, ${table}.data_level, ${table}.start_date) > (?, ?, ?)`);
    params.push(...after);
  };
  if (fromDayRows(filter)) {
    const latest = filter.version === 'latest';
    where = dayRowsWhere(filter, params);
    position('coverage_days');
    const columns = latest ? 'latest_end_date, latest_files, latest_size' : 'end_date, files, size';
    text = `SELECT instrument, data_level, start_date, ${columns} FROM coverage_days`;
  } else {
    where = whereOf(filter, params);
    position('files');
    text = 'SELECT files.instrument, files.data_level, files.start_date, max(files.end_date), count(*), sum(files.size) FROM files';
    groupBy = ' GROUP BY files.instrument, files.data_level, files.start_date';
  }
  if (where.length) text += ` WHERE ${where.join(' AND ')}`;
  params.push(size);
  return { text: `${text}${groupBy} ORDER BY 1, 2, 3 LIMIT ?`, params };
}

/**
 * Coverage days in (instrument, data_level, start_date) order, keyset-paged (keyset-pages.ts);
 * `read` runs a statement and answers its rows as arrays in the selected columns' order.
 */
export async function* coverageDays(read: (text: string, params: unknown[]) => Promise<unknown[][]>, filter: QueryFilter): AsyncIterable<CoverageDay> {
  const pages = keysetPages(
    async (after: CoverageAfter | undefined, size) => {
      const { text, params } = coveragePageSql(filter, after, size);
      // COUNT and SUM come back as strings from PostgreSQL (bigint/numeric).
      return (await read(text, params)).map((r): CoverageDay => ({
        instrument: String(r[0]),
        data_level: String(r[1]),
        start_date: String(r[2]),
        end_date: String(r[3]),
        files: Number(r[4]),
        size: Number(r[5]),
      }));
    },
    (last): CoverageAfter => [last.instrument, last.data_level, last.start_date],
  );
  for await (const page of pages) yield* page;
}
