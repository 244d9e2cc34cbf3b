import { describe, expect, it } from 'vitest';
import { countSql } from '../../../src/catalog/record-reads.js';

/*
 * X-Total-Count's statement (docs/performance.md, "A catalog of 10M records"): a filter that
 * coverage_days answers is counted from its day rows, whose number does not grow with the
 * files; any other filter counts the matching files. That both give the same number through
 * every write path is the kept-at-ingest contract's (test/contract/catalog-kept-at-ingest-contract.ts).
 */
describe('countSql', () => {
  it('sums coverage_days for instruments, levels, start dates and version any or latest', () => {
    expect(countSql({}).text).toBe('SELECT coalesce(sum(coverage_days.files), 0) FROM coverage_days');
    const month = countSql({ instrument: 'mag', data_level: 'l1a', start_date: '20240101', end_date: '20240131' });
    expect(month.text).toContain('sum(coverage_days.files)');
    expect(month.params).toEqual(['mag', 'l1a', '20240101', '20240131']);
    expect(countSql({ instrument: 'mag', version: 'latest' }).text).toContain('sum(coverage_days.latest_files)');
    expect(countSql({ version: '*' }).text).toContain('FROM coverage_days');
  });

  it('counts the files for every other filter', () => {
    for (const filter of [
      { descriptor: 'sci' },
      { version: 'v01-00' },
      { ingestion_start_date: '2025-01-01T00:00:00.000Z' },
      { instrument: 'mag', audience: 'public' as const },
      { instrument: 'mag', status: 'any' as const },
      { start_date: '20240101', overlap: true },
    ]) {
      expect(countSql(filter).text, JSON.stringify(filter)).toMatch(/^SELECT count\(\*\) FROM files WHERE /);
    }
  });
});
