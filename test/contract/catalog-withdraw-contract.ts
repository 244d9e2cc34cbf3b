import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFor, type Catalog, type FileRecord, type Tombstone } from '../../src/catalog/index.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * Catalog.withdraw (docs/api.md "Withdrawn files"): the tombstone in the record, the refusals,
 * a race of two withdrawals, and version=latest and coverage moving to the next archived
 * version, in the same transaction (src/catalog/product-refresh.ts).
 */

function recordOf(fileName: string, size: number): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  return recordFor(parsed.value, { ingestion_date: '2024-05-01T00:00:00.000Z', size, sha256: 'ef'.repeat(32) });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const tombstone = (extra: Partial<Tombstone> = {}): Tombstone => ({
  withdrawn_date: '2024-06-01T10:00:00.000Z',
  withdrawn_reason: 'wrong calibration table',
  withdrawn_by: 'curator-1',
  ...extra,
});

export function describeCatalogWithdraw(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog withdraw: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const v1 = recordOf('imap_mag_l1a_norm_20240701_20240701_v00-01.cdf', 10);
    const v2 = recordOf('imap_mag_l1a_norm_20240701_20240701_v00-02.cdf', 20);
    const v3 = recordOf('imap_mag_l1a_norm_20240701_20240701_v00-03.cdf', 40);
    const other = recordOf('imap_mag_l1a_burst_20240701_20240701_v00-01.cdf', 100);
    const product = { instrument: 'mag', descriptor: 'norm', start_date: '20240701', end_date: '20240701' };

    beforeAll(async () => {
      subject = await make();
      await catalog().insertMany([v1, v2, v3, other]);
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    const latest = async () => (await collect(catalog().query({ ...product, version: 'latest' }))).map((r) => r.version);
    const coverage = async (filter = {}) => collect(catalog().coverage({ instrument: 'mag', ...filter }));

    it('refuses an unknown file and a replacement that is not an archived file, changing nothing', async () => {
      expect(await catalog().withdraw('imap/mag/l1a/2024/07/imap_mag_l1a_norm_20240701_20240701_v09-09.cdf', tombstone())).toEqual({ outcome: 'not_found' });
      expect(await catalog().withdraw(v3.file_path, tombstone({ superseded_by: 'imap/mag/l1a/2024/07/nothing.cdf' }))).toEqual({ outcome: 'replacement_not_archived' });
      expect(await catalog().withdraw(v3.file_path, tombstone({ superseded_by: v3.file_path }))).toEqual({ outcome: 'replacement_not_archived' });
      expect(await catalog().get(v3.file_path)).toEqual(v3);
      expect(await latest()).toEqual(['v00-03']);
    });

    it('withdraws the latest version: the record keeps every field and gains the tombstone; latest and coverage move to the next archived version', async () => {
      const before = await coverage();
      expect(before).toEqual([{ instrument: 'mag', data_level: 'l1a', start_date: '20240701', end_date: '20240701', files: 4, size: 170 }]);
      const done = await catalog().withdraw(v3.file_path, tombstone({ superseded_by: v2.file_path }));
      const want = { ...v3, status: 'withdrawn', ...tombstone({ superseded_by: v2.file_path }) };
      expect(done).toEqual({ outcome: 'withdrawn', record: want });
      // Field order is the record's (JSON member order).
      expect(JSON.stringify(await catalog().get(v3.file_path))).toBe(JSON.stringify(done.outcome === 'withdrawn' ? done.record : undefined));
      expect(await latest()).toEqual(['v00-02']);
      expect(await coverage()).toEqual([{ ...before[0], files: 3, size: 130 }]);
      expect(await coverage({ version: 'latest' })).toEqual([{ ...before[0], files: 2, size: 120 }]);
      // Asked for, the withdrawn file is counted and grouped like any other.
      expect(await coverage({ status: 'withdrawn' })).toEqual([{ ...before[0], files: 1, size: 40 }]);
      expect(await coverage({ status: 'any' })).toEqual(before);
      expect(await catalog().count({ instrument: 'mag' })).toBe(3);
      expect(await catalog().count({ instrument: 'mag', status: 'withdrawn' })).toBe(1);
      expect(await catalog().count({ instrument: 'mag', status: 'any' })).toBe(4);
      expect(await catalog().count({ instrument: 'mag', status: 'withdrawn', version: 'latest' })).toBe(0);
    });

    it('refuses a second withdrawal, and a replacement that is itself withdrawn', async () => {
      const again = await catalog().withdraw(v3.file_path, tombstone({ withdrawn_reason: 'again' }));
      expect(again.outcome).toBe('already_withdrawn');
      expect(again.outcome === 'already_withdrawn' && again.record.withdrawn_reason).toBe('wrong calibration table');
      expect(await catalog().withdraw(v1.file_path, tombstone({ superseded_by: v3.file_path }))).toEqual({ outcome: 'replacement_not_archived' });
    });

    it('lets exactly one of two racing withdrawals of one file win', async () => {
      const outcomes = await Promise.all([
        catalog().withdraw(v1.file_path, tombstone({ withdrawn_by: 'a' })),
        catalog().withdraw(v1.file_path, tombstone({ withdrawn_by: 'b' })),
      ]);
      expect(outcomes.map((o) => o.outcome).sort()).toEqual(['already_withdrawn', 'withdrawn']);
      expect(await latest()).toEqual(['v00-02']);
    });

    it('leaves a product with every version withdrawn without a latest one, and its day out of coverage', async () => {
      expect((await catalog().withdraw(v2.file_path, tombstone())).outcome).toBe('withdrawn');
      expect(await latest()).toEqual([]);
      expect(await coverage()).toEqual([{ instrument: 'mag', data_level: 'l1a', start_date: '20240701', end_date: '20240701', files: 1, size: 100 }]);
      expect((await catalog().withdraw(other.file_path, tombstone())).outcome).toBe('withdrawn');
      expect(await coverage()).toEqual([]);
      expect(await coverage({ version: 'latest' })).toEqual([]);
    });
  });
}
