import type { CoverageDay, FileRecord, QueryFilter } from '../../src/catalog/index.js';

/**
 * What a catalog must answer, computed from the records themselves: the tests' reference model
 * of the search filters (docs/api.md, GET /query), `version=latest` and GET /coverage's days.
 */
export interface CatalogModel {
  /** The records a filter selects, in path order. */
  matching(filter: QueryFilter): FileRecord[];
  /** The coverage days of what the filter selects, in (instrument, level, start date) order. */
  coverage(filter: QueryFilter): CoverageDay[];
}

const productOf = (r: FileRecord) => `${r.instrument}\u0000${r.data_level}\u0000${r.descriptor}\u0000${r.start_date}`;

/** The model of `records` (one per path; the caller decides which of repeated paths is stored). */
export function catalogModel(records: Iterable<FileRecord>): CatalogModel {
  const stored = [...records];
  const highest = new Map<string, string>();
  for (const r of stored) if ((highest.get(productOf(r)) ?? '') < r.version) highest.set(productOf(r), r.version);
  const matching = (filter: QueryFilter) =>
    stored
      .filter(
        (r) =>
          (filter.instrument === undefined || r.instrument === filter.instrument) &&
          (filter.data_level === undefined || r.data_level === filter.data_level) &&
          (filter.descriptor === undefined || r.descriptor === filter.descriptor) &&
          (filter.start_date === undefined || r.start_date >= filter.start_date) &&
          (filter.end_date === undefined || r.start_date <= filter.end_date) &&
          (filter.version !== 'latest' || highest.get(productOf(r)) === r.version),
      )
      .sort((a, b) => (a.file_path < b.file_path ? -1 : 1));
  const coverage = (filter: QueryFilter): CoverageDay[] => {
    const days = new Map<string, CoverageDay>();
    for (const r of matching(filter)) {
      const key = `${r.instrument}\u0000${r.data_level}\u0000${r.start_date}`;
      const day = days.get(key);
      days.set(key, {
        instrument: r.instrument,
        data_level: r.data_level,
        start_date: r.start_date,
        end_date: day && day.end_date > r.end_date ? day.end_date : r.end_date,
        files: (day?.files ?? 0) + 1,
        size: (day?.size ?? 0) + r.size,
      });
    }
    return [...days.keys()].sort().map((k) => days.get(k)!);
  };
  return { matching, coverage };
}
