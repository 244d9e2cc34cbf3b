import { dayRowsCountSql, fromDayRows } from './coverage-sql.js';
import { comparisonsOn, whereOf } from './filter-sql.js';
import type { QueryFilter } from './query-filter.js';

/*
 * X-Total-Count from rows kept at ingest rather than from the files, where a filter allows it
 * (docs/performance.md "Counts that do not read the files"): a count that reads the matching
 * files grows with the archive, one that sums day rows grows with the days. Exact, as the rows
 * are kept in the write's transaction (product-refresh.ts, descriptor-days.ts), and only for
 * the filters whose rows hold every condition: archived files, every reader with a key (the
 * public's release dates are not in the rows), version any or latest. `?` placeholders.
 */

/** Whether descriptor_days answers this filter's count: a descriptor, and otherwise what coverage_days answers. */
function fromDescriptorDays(filter: QueryFilter): boolean {
  return filter.descriptor !== undefined && fromDayRows({ ...filter, descriptor: undefined });
}

/** The count of a filter with a descriptor summed from descriptor_days; undefined for any other filter. */
export function descriptorDaysCountSql(filter: QueryFilter): { text: string; params: unknown[] } | undefined {
  if (!fromDescriptorDays(filter)) return undefined;
  const params: unknown[] = [];
  const where: string[] = [];
  const eq = comparisonsOn('descriptor_days', where, params);
  eq('descriptor', filter.descriptor);
  eq('instrument', filter.instrument);
  eq('data_level', filter.data_level);
  eq('start_date', filter.start_date, '>=');
  eq('start_date', filter.end_date, '<=');
  const column = filter.version === 'latest' ? 'latest_files' : 'files';
  return { text: `SELECT coalesce(sum(descriptor_days.${column}), 0) FROM descriptor_days WHERE ${where.join(' AND ')}`, params };
}

/** A filter's count from day rows (coverage_days, or descriptor_days with a descriptor), when they answer it. */
export function keptCountSql(filter: QueryFilter): { text: string; params: unknown[] } | undefined {
  return dayRowsCountSql(filter) ?? descriptorDaysCountSql(filter);
}

/**
 * PostgreSQL: "ingested since X" (and nothing day rows cannot count besides) as the day rows'
 * count of the rest of the filter less the matching files ingested before X, when X lies
 * nearer the first ingestion than the last (by the ends of files_ingestion: two index probes),
 * else the files counted as before. The files before X are counted whatever their status, from
 * files_ingestion alone where the rest of the filter allows (an index-only scan: no index holds
 * status), less the withdrawn ones among them (the partial index files_withdrawn). One
 * statement: PostgreSQL runs a CASE branch's subqueries only if the branch is taken. Either way
 * the answer is exact; the cost is the side read, so a harvester's recent X and a backfill's
 * early X both read the fewer files (the middle of the span still reads half: docs/scale.md).
 * Undefined for other filters.
 */
export function ingestedSinceCountSql(filter: QueryFilter): { text: string; params: unknown[] } | undefined {
  const since = filter.ingestion_start_date;
  if (since === undefined || filter.ingestion_end_date !== undefined) return undefined;
  const rest: QueryFilter = { ...filter, ingestion_start_date: undefined };
  const kept = keptCountSql(rest);
  if (!kept) return undefined;
  const params: unknown[] = [since, since, ...kept.params];
  const before = (status: 'any' | 'withdrawn') => {
    const where = [...whereOf({ ...rest, status }, params), 'files.ingestion_date < ?'];
    params.push(since);
    return `(SELECT count(*) FROM files WHERE ${where.join(' AND ')})`;
  };
  const all = before('any');
  const withdrawn = before('withdrawn');
  const direct = whereOf(filter, params);
  const ends = (f: 'min' | 'max') => `(SELECT ${f}(files.ingestion_date) FROM files)::timestamptz`;
  return {
    text:
      `SELECT CASE WHEN ?::timestamptz - ${ends('min')} < ${ends('max')} - ?::timestamptz` +
      ` THEN (${kept.text}) - ${all} + ${withdrawn}` +
      ` ELSE (SELECT count(*) FROM files WHERE ${direct.join(' AND ')}) END`,
    params,
  };
}
