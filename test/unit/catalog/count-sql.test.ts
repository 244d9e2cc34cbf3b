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

  it('sums descriptor_days for a descriptor with what coverage_days answers besides', () => {
    expect(countSql({ descriptor: 'sci' })).toEqual({ text: 'SELECT coalesce(sum(descriptor_days.files), 0) FROM descriptor_days WHERE descriptor_days.descriptor = ?', params: ['sci'] });
    const latest = countSql({ descriptor: 'hk', instrument: 'mag', data_level: 'l1a', start_date: '20240101', version: 'latest' });
    expect(latest.text).toContain('sum(descriptor_days.latest_files)');
    expect(latest.params).toEqual(['hk', 'mag', 'l1a', '20240101']);
  });

  it('counts "ingested since" on PostgreSQL as day rows less the files before, or as the files, in one statement', () => {
    const since = '2025-01-02T00:00:00.000Z';
    const { text, params } = countSql({ ingestion_start_date: since }, true);
    expect(text).toMatch(/^SELECT CASE WHEN .* THEN \(SELECT coalesce\(sum\(coverage_days\.files\), 0\) FROM coverage_days\)/);
    // Before X: every file (files_ingestion alone), less the withdrawn ones; else the files since X.
    expect(text).toContain(" - (SELECT count(*) FROM files WHERE files.ingestion_date < ?) + (SELECT count(*) FROM files WHERE files.status = 'withdrawn' AND files.ingestion_date < ?)");
    expect(text).toMatch(/ ELSE \(SELECT count\(\*\) FROM files WHERE files\.ingestion_date >= \? AND files\.status IS NULL\) END$/);
    expect(params).toEqual([since, since, since, since, since]);
    expect(countSql({ ingestion_start_date: since, descriptor: 'sci' }, true).text).toContain('FROM descriptor_days');
    // SQLite, a public reader, an end: the files counted.
    for (const [filter, postgres] of [
      [{ ingestion_start_date: since }, false],
      [{ ingestion_start_date: since, audience: 'public' as const }, true],
      [{ ingestion_start_date: since, ingestion_end_date: since }, true],
    ] as const) {
      expect(countSql(filter, postgres).text, JSON.stringify(filter)).toMatch(/^SELECT count\(\*\) FROM files WHERE /);
    }
  });

  it('counts the files for every other filter', () => {
    for (const filter of [
      { descriptor: 'sci', extension: 'cdf' },
      { descriptor: 'sci', audience: 'public' as const },
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
