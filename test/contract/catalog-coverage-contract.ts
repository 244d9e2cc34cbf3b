import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoverageDay, FileRecord } from '../../src/catalog/index.js';
import { QUERY_PAGE_SIZE } from '../../src/catalog/keyset-pages.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

function record(instrument: string, level: string, start: string, end: string, version = 'v00-01', size = 100): FileRecord {
  const ext = level === 'l0' ? 'pkts' : 'cdf';
  const name = `imap_${instrument}_${level}_sci_${start}_${end}_${version}.${ext}`;
  return {
    file_path: `imap/${instrument}/${level}/${start.slice(0, 4)}/${start.slice(4, 6)}/${name}`,
    instrument,
    data_level: level,
    descriptor: 'sci',
    start_date: start,
    end_date: end,
    version,
    extension: ext,
    ingestion_date: '2024-06-01T00:00:00.000Z',
    size,
    sha256: '0'.repeat(64),
  };
}

async function all(days: AsyncIterable<CoverageDay>): Promise<CoverageDay[]> {
  const out: CoverageDay[] = [];
  for await (const d of days) out.push(d);
  return out;
}

/** Catalog.coverage: part of the catalog contract (catalog-contract.ts runs it on every adapter). */
export function describeCatalogCoverage(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`Catalog.coverage: ${label}`, () => {
    let t: CatalogUnderTest;
    beforeAll(async () => {
      t = await make();
      for (const r of [
        record('swe', 'l1a', '20240101', '20240101', 'v00-01', 10),
        record('swe', 'l1a', '20240101', '20240102', 'v00-02', 20),
        record('swe', 'l1a', '20240103', '20240103', 'v00-01', 30),
        record('mag', 'l2', '20240105', '20240105', 'v01-00', 40),
        record('hit', 'l0', '20231231', '20231231', 'v00-01', 50),
      ]) {
        await t.catalog.insert(r);
      }
    });
    afterAll(async () => {
      await t?.dispose();
    });

    it('groups files by instrument, data level and start date, in that order', async () => {
      expect(await all(t.catalog.coverage({}))).toEqual([
        { instrument: 'hit', data_level: 'l0', start_date: '20231231', end_date: '20231231', files: 1, size: 50 },
        { instrument: 'mag', data_level: 'l2', start_date: '20240105', end_date: '20240105', files: 1, size: 40 },
        { instrument: 'swe', data_level: 'l1a', start_date: '20240101', end_date: '20240102', files: 2, size: 30 },
        { instrument: 'swe', data_level: 'l1a', start_date: '20240103', end_date: '20240103', files: 1, size: 30 },
      ]);
    });

    it('applies the query filter, as /query does', async () => {
      const days = await all(t.catalog.coverage({ instrument: 'swe', version: 'v00-01', start_date: '20240101', end_date: '20240102' }));
      expect(days).toEqual([{ instrument: 'swe', data_level: 'l1a', start_date: '20240101', end_date: '20240101', files: 1, size: 10 }]);
      expect(await all(t.catalog.coverage({ extension: 'pkts', version: '*' }))).toHaveLength(1);
      expect(await all(t.catalog.coverage({ descriptor: 'burst' }))).toEqual([]);
    });
  });

  describe(`Catalog.coverage over several pages: ${label}`, () => {
    let t: CatalogUnderTest;
    // More groups than a page, with a product boundary inside the second page.
    const firstProduct = QUERY_PAGE_SIZE + 5;
    const secondProduct = 20;
    beforeAll(async () => {
      t = await make();
      const day0 = Date.UTC(2020, 0, 1);
      const date = (i: number) => new Date(day0 + i * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
      const records = [
        ...Array.from({ length: firstProduct }, (_, i) => record('lo', 'l1b', date(i), date(i))),
        ...Array.from({ length: secondProduct }, (_, i) => record('swe', 'l2', date(i), date(i))),
      ];
      expect(await t.catalog.insertMany(records)).toBe(records.length);
    });
    afterAll(async () => {
      await t?.dispose();
    });

    it('returns every group once, in order', async () => {
      const days = await all(t.catalog.coverage({}));
      expect(days).toHaveLength(firstProduct + secondProduct);
      const keys = days.map((d) => `${d.instrument}/${d.data_level}/${d.start_date}`);
      expect(new Set(keys).size).toBe(keys.length);
      expect([...keys].sort()).toEqual(keys);
      expect(days.every((d) => d.files === 1 && d.size === 100)).toBe(true);
    });
  });
}
