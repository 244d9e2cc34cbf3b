import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { positionOf, recordFor, type Catalog, type FileRecord, type QueryFilter, type QueryOptions } from '../../src/catalog/index.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/** A record for a valid name, indexed at `ingested`. */
function indexed(fileName: string, ingested: string): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  return recordFor(parsed.value, { ingestion_date: ingested, size: 1, sha256: 'cd'.repeat(32) });
}

const name = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * The harvesting filters (version=latest, overlap, ingestion bounds) and cursors combined with
 * them: part of the catalog contract, so they hold on every adapter, not only on SQLite.
 */
export function describeCatalogFilters(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog filters: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const names = async (filter: QueryFilter, options?: QueryOptions) => {
      const out: string[] = [];
      for await (const r of catalog().query(filter, options)) out.push(name(r.file_path));
      return out;
    };

    beforeAll(async () => {
      subject = await make();
      const day = (d: number) => `2024-03-${String(d).padStart(2, '0')}T12:00:00.000Z`;
      await catalog().insertMany([
        indexed('imap_ultra-90_l1a_sci_20240101_20240101_v00-01.cdf', day(1)),
        indexed('imap_ultra-90_l1a_sci_20240101_20240101_v00-02.cdf', day(2)),
        indexed('imap_ultra-90_l1a_sci_20240101_20240101_v01-00.cdf', day(3)),
        indexed('imap_ultra-90_l1a_sci_20240102_20240102_v00-01.cdf', day(4)),
        // Fixed-width versions: v01-10 is newer than v01-09 in text order too.
        indexed('imap_ultra-90_l1a_sci_20240105_20240105_v01-09.cdf', day(5)),
        indexed('imap_ultra-90_l1a_sci_20240105_20240105_v01-10.cdf', day(6)),
        // Another descriptor and another level are other products.
        indexed('imap_ultra-90_l1a_de_20240101_20240101_v00-03.cdf', day(7)),
        indexed('imap_ultra-90_l1b_sci_20240101_20240101_v00-01.cdf', day(8)),
        // A file spanning the new year: starts before 20240101, ends after it.
        indexed('imap_ultra-90_l1a_sci_20231230_20240102_v00-01.cdf', day(9)),
      ]);
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('version=latest keeps each product’s highest version only', async () => {
      // In file_path order: .../l1a/2023/12/... comes before .../l1a/2024/01/...
      expect(await names({ instrument: 'ultra-90', version: 'latest' })).toEqual([
        'imap_ultra-90_l1a_sci_20231230_20240102_v00-01.cdf',
        'imap_ultra-90_l1a_de_20240101_20240101_v00-03.cdf',
        'imap_ultra-90_l1a_sci_20240101_20240101_v01-00.cdf',
        'imap_ultra-90_l1a_sci_20240102_20240102_v00-01.cdf',
        'imap_ultra-90_l1a_sci_20240105_20240105_v01-10.cdf',
        'imap_ultra-90_l1b_sci_20240101_20240101_v00-01.cdf',
      ]);
      expect(await catalog().count({ instrument: 'ultra-90', version: 'latest' })).toBe(6);
      expect(await catalog().count({ instrument: 'ultra-90', version: '*' })).toBe(9);
      expect(await names({ instrument: 'ultra-90', data_level: 'l1a', descriptor: 'sci', start_date: '20240101', end_date: '20240101', version: 'latest' })).toEqual([
        'imap_ultra-90_l1a_sci_20240101_20240101_v01-00.cdf',
      ]);
    });

    it('dates bound the start date, or with overlap the whole span', async () => {
      const day = { instrument: 'ultra-90', data_level: 'l1a', descriptor: 'sci', start_date: '20240101', end_date: '20240101' } as const;
      expect(await names(day)).toHaveLength(3);
      const overlapping = await names({ ...day, overlap: true });
      expect(overlapping).toHaveLength(4);
      expect(overlapping).toContain('imap_ultra-90_l1a_sci_20231230_20240102_v00-01.cdf');
      // Only one bound: the span must reach it.
      expect(await names({ instrument: 'ultra-90', start_date: '20240103', overlap: true })).toEqual([
        'imap_ultra-90_l1a_sci_20240105_20240105_v01-09.cdf',
        'imap_ultra-90_l1a_sci_20240105_20240105_v01-10.cdf',
      ]);
      expect(await names({ instrument: 'ultra-90', end_date: '20231231', overlap: true })).toEqual([
        'imap_ultra-90_l1a_sci_20231230_20240102_v00-01.cdf',
      ]);
    });

    it('ingestion bounds are inclusive instants, alone or with other filters', async () => {
      const got = await names({ instrument: 'ultra-90', ingestion_start_date: '2024-03-02T12:00:00.000Z', ingestion_end_date: '2024-03-04T12:00:00.000Z' });
      expect(got).toEqual([
        'imap_ultra-90_l1a_sci_20240101_20240101_v00-02.cdf',
        'imap_ultra-90_l1a_sci_20240101_20240101_v01-00.cdf',
        'imap_ultra-90_l1a_sci_20240102_20240102_v00-01.cdf',
      ]);
      expect(await catalog().count({ ingestion_start_date: '2024-03-09T12:00:00.000Z' })).toBe(1);
      expect(await names({ ingestion_end_date: '2024-03-01T11:59:59.999Z' })).toEqual([]);
      expect(await names({ instrument: 'ultra-90', version: 'latest', ingestion_start_date: '2024-03-06T00:00:00.000Z' })).toHaveLength(4);
    });

    it('pages a filtered, sorted answer by cursor exactly as in one pass, whatever the page size', async () => {
      const filter: QueryFilter = { instrument: 'ultra-90', version: 'latest', start_date: '20240101', overlap: true };
      for (const sort of [
        { field: 'ingestion_date', descending: true },
        { field: 'start_date', descending: false },
        { field: 'file_path', descending: true },
      ] as const) {
        const whole: FileRecord[] = [];
        for await (const r of catalog().query(filter, { sort })) whole.push(r);
        expect(whole.length, sort.field).toBe(6);
        for (const limit of [1, 2, 4]) {
          const paged: FileRecord[] = [];
          for (;;) {
            const after = paged.length > 0 ? positionOf(paged.at(-1)!, sort) : undefined;
            const page: FileRecord[] = [];
            for await (const r of catalog().query(filter, { sort, after, limit })) page.push(r);
            paged.push(...page);
            if (page.length < limit) break;
          }
          expect(paged.map((r) => r.file_path), `${sort.field} by ${limit}`).toEqual(whole.map((r) => r.file_path));
        }
      }
    });
  });
}
