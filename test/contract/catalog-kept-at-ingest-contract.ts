import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileRecord, QueryFilter } from '../../src/catalog/index.js';
import { fromDayRows } from '../../src/catalog/coverage-sql.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import { recordFor } from '../../src/catalog/index.js';
import { catalogModel, type CatalogModel } from '../helpers/catalog-model.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * What the catalog keeps at ingest (src/catalog/product-refresh.ts): each file's latest flag
 * and the coverage rows per day. Generated records, written through every write path in an
 * order where older versions often come after newer ones, must answer version=latest and
 * /coverage exactly as a full recomputation from the records does.
 */

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generated(count: number, seed: number): FileRecord[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const out: FileRecord[] = [];
  for (let i = 0; i < count; i++) {
    const level = pick(['l1a', 'l2']);
    const start = `202403${String(1 + Math.floor(next() * 6)).padStart(2, '0')}`;
    const end = `202403${String(Number(start.slice(6)) + Math.floor(next() * 3)).padStart(2, '0')}`;
    const name = `imap_${pick(['mag', 'swe', 'hit'])}_${level}_${pick(['sci', 'burst'])}_${start}_${end}_v00-0${Math.floor(next() * 6)}.cdf`;
    const parsed = parseFileName(name, IMAP_MISSION);
    if (!parsed.ok) throw new Error(parsed.message);
    out.push(recordFor(parsed.value, { ingestion_date: '2024-04-01T00:00:00.000Z', size: 1 + Math.floor(next() * 1000), sha256: 'cd'.repeat(32) }));
  }
  return out;
}

/** The full recomputation: the records stored (first of a path wins), each product's highest version. */
function recomputed(written: readonly FileRecord[]): CatalogModel {
  const stored = new Map<string, FileRecord>();
  for (const r of written) if (!stored.has(r.file_path)) stored.set(r.file_path, r);
  return catalogModel(stored.values());
}

const FILTERS: QueryFilter[] = [
  {},
  { version: 'latest' },
  { version: 'latest', instrument: 'mag' },
  { version: 'latest', instrument: 'swe', data_level: 'l2', start_date: '20240302', end_date: '20240304' },
  { version: 'latest', descriptor: 'burst' },
  // descriptor_days (descriptor-days.ts), kept beside coverage_days by its triggers.
  { descriptor: 'sci' },
  { descriptor: 'burst', instrument: 'mag', start_date: '20240302', end_date: '20240305' },
  { instrument: 'hit', start_date: '20240303' },
  { version: '*', data_level: 'l1a', end_date: '20240302' },
];

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

export function describeKeptAtIngest(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`latest flags and coverage rows kept at ingest agree with a full recomputation: ${label}`, () => {
    let t: CatalogUnderTest;
    const written: FileRecord[] = [];
    const check = async () => {
      const want = recomputed(written);
      for (const filter of FILTERS) {
        const label = JSON.stringify(filter);
        expect(await collect(t.catalog.query(filter)), label).toEqual(want.matching(filter));
        expect(await t.catalog.count(filter), label).toBe(want.matching(filter).length);
        expect(await collect(t.catalog.coverage(filter)), label).toEqual(want.coverage(filter));
      }
    };
    beforeAll(async () => {
      t = await make();
    });
    afterAll(async () => {
      await t?.dispose();
    });

    it('the filters cover both ways of answering coverage', () => {
      expect(FILTERS.filter(fromDayRows).length).toBeGreaterThan(2);
      expect(FILTERS.filter((f) => !fromDayRows(f)).length).toBeGreaterThan(0);
    });

    it('after inserts one at a time', async () => {
      for (const r of generated(150, 1)) {
        await t.catalog.insert(r);
        written.push(r);
      }
      await check();
    });

    it('after insertMany batches, some with paths already stored', async () => {
      for (let batch = 0; batch < 4; batch++) {
        const records = [...generated(120, 10 + batch), ...written.slice(batch * 10, batch * 10 + 5)];
        await t.catalog.insertMany(records);
        written.push(...records);
      }
      await check();
    });

    it('after a bulk load smaller than the table and one larger than it', async () => {
      const small = generated(200, 20);
      await t.catalog.bulkLoad(small);
      written.push(...small);
      await check();
      const large = generated(25_000, 21);
      await t.catalog.bulkLoad(large);
      written.push(...large);
      await check();
    });

    it('after versions of one product inserted at once: one version stays latest', async () => {
      const versions = ['v09-01', 'v09-03', 'v09-02', 'v09-00'].map((v) => {
        const parsed = parseFileName(`imap_mag_l2_sci_20240310_20240310_${v}.cdf`, IMAP_MISSION);
        if (!parsed.ok) throw new Error(parsed.message);
        return recordFor(parsed.value, { ingestion_date: '2024-04-02T00:00:00.000Z', size: 7, sha256: 'ef'.repeat(32) });
      });
      await Promise.all(versions.map((r) => t.catalog.insert(r)));
      written.push(...versions);
      const latest = await collect(t.catalog.query({ version: 'latest', instrument: 'mag', data_level: 'l2', start_date: '20240310', end_date: '20240310' }));
      expect(latest.map((r) => r.version)).toEqual(['v09-03']);
      await check();
    });
  });
}
