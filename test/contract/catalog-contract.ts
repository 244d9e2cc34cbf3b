import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { positionOf, recordFor, type Catalog, type FileRecord, type QuerySort } from '../../src/catalog/index.js';
import { QUERY_PAGE_SIZE } from '../../src/catalog/keyset-pages.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import { describeAuditQueue } from './catalog-audit-contract.js';
import { describeCatalogCoverage } from './catalog-coverage-contract.js';
import { describeCatalogFilters } from './catalog-filter-contract.js';
import { describeCatalogModel } from './catalog-model-contract.js';
import { describeKeptAtIngest } from './catalog-kept-at-ingest-contract.js';
import { describeCatalogWithdraw } from './catalog-withdraw-contract.js';
import { describeCatalogVisibility } from './catalog-visibility-contract.js';
import { describeCatalogReleases } from './catalog-releases-contract.js';
import { describeCatalogReleaseRepeats } from './catalog-release-repeats-contract.js';
import type { CatalogUnderTest } from './catalog-under-test.js';
import { describeKeyStore } from './key-store-contract.js';
import { describeNameLeases } from './name-leases-contract.js';

export type { CatalogUnderTest } from './catalog-under-test.js';

/** A record for a valid name, as ingest would build it. */
export function recordOf(fileName: string, size = 1): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  return recordFor(parsed.value, { ingestion_date: '2024-02-01T00:00:00.000Z', size, sha256: 'ab'.repeat(32) });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Byte order of UTF-8 strings (what SQLite BINARY, PostgreSQL "C" and S3 listings use). */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The catalog contract: every adapter runs it (test/contract/*-catalog.test.ts), with its
 * parts that need a fresh catalog each (filters, coverage, the key store beside the records).
 * `extra` adds what only that adapter has.
 */
export function testCatalog(name: string, make: () => Promise<CatalogUnderTest>, extra?: (get: () => Catalog) => void): void {
  describe(`catalog contract: ${name}`, () => {
    let subject: CatalogUnderTest;
    const catalog = () => subject.catalog;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    const names = [
      'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
      'imap_swe_l1a_sci_20240106_20240106_v00-01.cdf',
      'imap_swe_l1a_sci_20240106_20240106_v00-02.cdf',
      'imap_swe_l0_raw_20240105_20240105_v00-01.pkts',
      'imap_hit_l2_burst_20240301_20240302_v01-00.cdf',
      // Upper case before lower case, and hi-45 before hit, only in byte order.
      'imap_hi-45_l1b_Sci_20240210_20240210_v00-01.cdf',
      'imap_hi-45_l1b_burst_20240210_20240210_v00-01.cdf',
      'imap_hit_l1b_Burst_20240210_20240210_v00-01.cdf',
    ];

    it('inserts a record once and reads it back with every field', async () => {
      const record = recordOf(names[0]!, 123_456_789_012);
      expect(await catalog().insert(record)).toBe('inserted');
      expect(await catalog().insert(record)).toBe('exists');
      expect(await catalog().get(record.file_path)).toEqual(record);
      expect(await catalog().get('imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v09-09.cdf')).toBeUndefined();
    });

    // Upload's and download's checks read only these (docs/performance.md, "Per-request cost on both engines").
    it('reads only the fields asked for of a path\'s record, absent ones left out, integers as numbers', async () => {
      const record = { ...recordOf('imap_mag_l2_norm_20240109_20240109_v03-07.cdf', 123_456_789_012), release_date: '2024-01-01T00:00:00Z' };
      await catalog().insert(record);
      expect(await catalog().getFields(record.file_path, ['status', 'release_date', 'fixity'])).toEqual({ release_date: record.release_date });
      expect(await catalog().getFields(record.file_path, ['size', 'sha256'])).toEqual({ size: 123_456_789_012, sha256: record.sha256 });
      expect(await catalog().getFields(`${record.file_path}x`, ['status'])).toBeUndefined();
    });

    it('says whether a path has a record, exactly (no prefix, no other case)', async () => {
      const record = recordOf(names[1]!);
      expect(await catalog().has(record.file_path)).toBe(false);
      await catalog().insert(record);
      expect(await catalog().has(record.file_path)).toBe(true);
      expect(await catalog().has(record.file_path.slice(0, -1))).toBe(false);
      expect(await catalog().has(`${record.file_path}x`)).toBe(false);
      expect(await catalog().has(record.file_path.toUpperCase())).toBe(false);
    });

    it('inserts many records at once, counting only the new ones', async () => {
      const batch = ['imap_idex_l1a_dust_20240105_20240105_v00-01.cdf', 'imap_idex_l1a_dust_20240106_20240106_v00-01.cdf'].map((n) => recordOf(n));
      expect(await catalog().insertMany(batch)).toBe(2);
      expect(await catalog().insertMany([...batch, recordOf('imap_idex_l1a_dust_20240107_20240107_v00-01.cdf')])).toBe(1);
      expect(await catalog().count({ instrument: 'idex' })).toBe(3);
    });

    it('keeps the first of a path given twice in one load, and leaves a stored record as it is', async () => {
      const stored = recordOf('imap_idex_l1a_dust_20240110_20240110_v00-01.cdf', 5);
      expect(await catalog().insert(stored)).toBe('inserted');
      const twice = recordOf('imap_idex_l1a_dust_20240111_20240111_v00-01.cdf', 6);
      const batch = [
        { ...stored, size: 50, uploader: 'other' },
        twice,
        { ...twice, size: 60, uploader: 'second' },
        recordOf('imap_idex_l1a_dust_20240109_20240109_v00-01.cdf', 7),
      ];
      expect(await catalog().insertMany(batch)).toBe(2);
      expect(await catalog().get(stored.file_path)).toEqual(stored);
      expect(await catalog().get(twice.file_path)).toEqual(twice);
      expect((await catalog().get(batch[3]!.file_path))?.size).toBe(7);
    });

    it('lets exactly one of several racing inserts of one record win', async () => {
      const record = recordOf('imap_mag_l1a_norm_20240105_20240105_v00-01.cdf');
      const results = await Promise.all(Array.from({ length: 8 }, () => catalog().insert(record)));
      expect(results.filter((r) => r === 'inserted')).toHaveLength(1);
    });

    it('fills the uploader of a record of the same bytes written first without one, and never replaces one', async () => {
      const plain = recordOf('imap_mag_l1a_norm_20240106_20240106_v00-01.cdf');
      expect(await catalog().insert(plain)).toBe('inserted');
      expect(await catalog().insert({ ...plain, sha256: 'cd'.repeat(32), uploader: 'mallory' })).toBe('exists');
      expect((await catalog().get(plain.file_path))?.uploader).toBeUndefined();
      expect(await catalog().insert({ ...plain, uploader: 'alpha' })).toBe('exists');
      expect((await catalog().get(plain.file_path))?.uploader).toBe('alpha');
      expect(await catalog().insert({ ...plain, uploader: 'beta' })).toBe('exists');
      expect((await catalog().get(plain.file_path))?.uploader).toBe('alpha');
    });

    it('answers each filter with matching records, ordered by file_path byte by byte', async () => {
      for (const n of names) await catalog().insert(recordOf(n));
      const paths = async (filter: Parameters<Catalog['query']>[0]) => (await collect(catalog().query(filter))).map((r) => r.file_path);
      const all = await paths({});
      expect(all).toEqual([...all].sort(byteOrder));
      expect(all.length).toBeGreaterThanOrEqual(names.length);
      expect(await paths({ instrument: 'swe', data_level: 'l1a', version: '*' })).toEqual([
        'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
        'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf',
        'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-02.cdf',
      ]);
      expect(await paths({ instrument: 'swe', version: 'v00-02' })).toEqual([
        'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-02.cdf',
      ]);
      expect(await paths({ instrument: 'swe', start_date: '20240106', end_date: '20240106' })).toHaveLength(2);
      expect(await paths({ extension: 'pkts' })).toEqual(['imap/swe/l0/2024/01/imap_swe_l0_raw_20240105_20240105_v00-01.pkts']);
      expect(await paths({ descriptor: 'burst', data_level: 'l2' })).toEqual([
        'imap/hit/l2/2024/03/imap_hit_l2_burst_20240301_20240302_v01-00.cdf',
      ]);
      expect(await paths({ data_level: 'l1b' })).toEqual([
        'imap/hi-45/l1b/2024/02/imap_hi-45_l1b_Sci_20240210_20240210_v00-01.cdf',
        'imap/hi-45/l1b/2024/02/imap_hi-45_l1b_burst_20240210_20240210_v00-01.cdf',
        'imap/hit/l1b/2024/02/imap_hit_l1b_Burst_20240210_20240210_v00-01.cdf',
      ]);
      expect(await paths({ file_path: 'imap/hit/l2/2024/03/imap_hit_l2_burst_20240301_20240302_v01-00.cdf' })).toHaveLength(1);
      expect(await paths({ instrument: 'glows' })).toEqual([]);
    });

    it('streams a result larger than a page without gaps or repeats', async () => {
      const count = QUERY_PAGE_SIZE * 2 + 7;
      const records = Array.from({ length: count }, (_, i) => {
        const day = String(1 + (i % 28)).padStart(2, '0');
        return recordOf(`imap_codice_l1a_d${i}_202405${day}_202405${day}_v00-01.cdf`);
      });
      expect(await catalog().insertMany(records)).toBe(count);
      const inserted = records.map((r) => r.file_path);
      const got = (await collect(catalog().query({ instrument: 'codice' }))).map((r) => r.file_path);
      expect(got).toEqual(inserted.sort(byteOrder));
      const paths = await collect(catalog().paths());
      expect(paths).toEqual([...paths].sort(byteOrder));
      expect(new Set(paths).size).toBe(paths.length);
      expect(paths).toEqual(expect.arrayContaining(inserted));
    });

    it('walks any sort order in pages (after + limit) exactly as in one pass', async () => {
      const sorts: QuerySort[] = [
        { field: 'file_path', descending: false },
        { field: 'start_date', descending: true },
        { field: 'ingestion_date', descending: false },
      ];
      for (const sort of sorts) {
        const whole = await collect(catalog().query({ instrument: 'codice' }, { sort }));
        const keys = whole.map((r) => [r[sort.field], r.file_path] as const);
        const expected = [...keys].sort((a, b) => byteOrder(a[0], b[0]) || byteOrder(a[1], b[1]));
        expect(keys).toEqual(sort.descending ? expected.reverse() : expected);
        const paged: FileRecord[] = [];
        for (;;) {
          const after = paged.length > 0 ? positionOf(paged[paged.length - 1]!, sort) : undefined;
          const page = await collect(catalog().query({ instrument: 'codice' }, { sort, after, limit: 700 }));
          paged.push(...page);
          if (page.length < 700) break;
        }
        expect(paged.map((r) => r.file_path)).toEqual(whole.map((r) => r.file_path));
      }
      expect(await catalog().count({ instrument: 'codice' })).toBe(QUERY_PAGE_SIZE * 2 + 7);
    });

    it('frees what a query holds when the reader stops early', async () => {
      // More abandoned queries than a connection pool holds: each must give its connection back.
      for (let i = 0; i < 25; i++) {
        for await (const record of catalog().query({ instrument: 'codice' })) {
          expect(record.instrument).toBe('codice');
          break;
        }
      }
      await catalog().ping();
      expect(await catalog().get(recordOf(names[0]!).file_path)).toBeDefined();
    });

    extra?.(catalog);
  });
  describe(`catalog driver failures: ${name}`, () => {
    it('reports a failing database as SDC_BACKEND_FAILED with the driver error as its cause', async () => {
      const subject = await make();
      // The key store lives in the same database and reports its failures the same way.
      const keys = subject.catalog.keys();
      await subject.catalog.close();
      const record = recordOf('imap_swe_l1a_sci_20240301_20240301_v00-01.cdf');
      const calls: (() => unknown)[] = [() => subject.catalog.get(record.file_path), () => subject.catalog.has(record.file_path), () => subject.catalog.count({}), () => subject.catalog.insert(record), () => subject.catalog.ping()];
      // Query pages and coverage are streamed: their first page fails the same way.
      calls.push(() => collect(subject.catalog.query({})), () => collect(subject.catalog.coverage({})));
      calls.push(() => keys.check(`sdc_${'0'.repeat(16)}_${'A'.repeat(43)}`), () => keys.anyExist(), () => keys.list(), () => keys.create('swe-pipeline'), () => keys.revoke('swe-pipeline'), () => keys.rotate('swe-pipeline', 0));
      for (const call of calls) {
        // Thrown at once (a driver that answers synchronously) or rejected: the same failure.
        const failure = await Promise.resolve().then(call).then(
          () => undefined,
          (err: unknown) => err as { code?: string; statusCode?: number; cause?: unknown },
        );
        expect(failure).toMatchObject({ code: 'SDC_BACKEND_FAILED', statusCode: 500 });
        expect(failure?.cause).toBeDefined();
      }
      // Already closed: remove what the test created without closing twice.
      await subject.dispose().catch(() => undefined);
    });
  });
  describeCatalogFilters(name, make);
  describeCatalogModel(name, make);
  describeCatalogCoverage(name, make);
  describeKeptAtIngest(name, make);
  describeCatalogWithdraw(name, make);
  describeCatalogVisibility(name, make);
  describeCatalogReleases(name, make);
  describeCatalogReleaseRepeats(name, make);
  describeKeyStore(name, make);
  describeNameLeases(name, make);
  describeAuditQueue(name, make);
}
