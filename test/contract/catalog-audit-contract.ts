import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, FileRecord } from '../../src/catalog/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';
import { recordOf } from './catalog-contract.js';

/** Every path of the audit queue, in its order (pages of `pageSize`). */
async function queue(catalog: Catalog, verifiedBefore: string, prefix?: string, pageSize = 2): Promise<string[]> {
  const out: string[] = [];
  for await (const page of catalog.auditQueue({ verifiedBefore, prefix, pageSize })) out.push(...page.map((r: FileRecord) => r.file_path));
  return out;
}

/**
 * The fixity audit's catalog side (docs/deploy.md "Fixity audits"): the queue's order (never
 * verified in path order, then oldest verified), its prefix, its bound, and recordFixity.
 */
export function describeAuditQueue(name: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`audit queue contract: ${name}`, () => {
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
      'imap_mag_l1a_norm_20240105_20240105_v00-01.cdf',
      'imap_swe_l1a_sci_20240106_20240106_v00-01.cdf',
      'imap_mag_l2_norm_20240107_20240107_v00-01.cdf',
      'imap_hit_l2_burst_20240301_20240302_v01-00.cdf',
    ];
    const paths = names.map((n) => recordOf(n).file_path);
    const sorted = [...paths].sort();

    it('puts every never-verified file first, in file_path order, a page at a time', async () => {
      expect(await catalog().insertMany(names.map((n) => recordOf(n)))).toBe(names.length);
      expect(await catalog().fixityStatus()).toEqual({ mismatch: 0, missing: 0, neverVerified: true });
      expect(await catalog().countVerified()).toBe(0);
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual(sorted);
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', undefined, 1000)).toEqual(sorted);
    });

    it('records the outcome in the record, and puts verified files after the never-verified ones, oldest first', async () => {
      // Verified in an order unlike the paths': the queue then follows the dates.
      expect(await catalog().recordFixity(sorted[3]!, '2026-01-01T00:00:03.000Z', 'ok')).toBe(true);
      expect(await catalog().recordFixity(sorted[0]!, '2026-01-01T00:00:05.000Z', 'mismatch')).toBe(true);
      expect(await catalog().recordFixity(sorted[4]!, '2026-01-01T00:00:01.000Z', 'missing')).toBe(true);
      expect(await catalog().recordFixity('imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v09-09.cdf', '2026-01-01T00:00:00.000Z', 'ok')).toBe(false);
      expect(await catalog().get(sorted[0]!)).toMatchObject({ verified_date: '2026-01-01T00:00:05.000Z', fixity: 'mismatch' });
      expect(await catalog().get(sorted[4]!)).toMatchObject({ verified_date: '2026-01-01T00:00:01.000Z', fixity: 'missing' });
      expect(await catalog().get(sorted[1]!)).not.toHaveProperty('fixity');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual([sorted[1], sorted[2], sorted[4], sorted[3], sorted[0]]);
      expect(await catalog().fixityStatus()).toEqual({ mismatch: 1, missing: 1, oldestVerified: '2026-01-01T00:00:01.000Z', neverVerified: true });
      expect(await catalog().countVerified()).toBe(3);
    });

    it('leaves out files verified at or after the bound: a run never meets the files it verified itself', async () => {
      expect(await queue(catalog(), '2026-01-01T00:00:03.000Z')).toEqual([sorted[1], sorted[2], sorted[4]]);
      expect(await queue(catalog(), '2000-01-01T00:00:00.000Z')).toEqual([sorted[1], sorted[2]]);
    });

    it('resumes where the last run stopped: what a run verified goes to the end of the next', async () => {
      await catalog().recordFixity(sorted[1]!, '2026-01-02T00:00:00.000Z', 'ok');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual([sorted[2], sorted[4], sorted[3], sorted[0], sorted[1]]);
      // A file found good again (restored by an operator) is cleared.
      await catalog().recordFixity(sorted[0]!, '2026-01-03T00:00:00.000Z', 'ok');
      expect(await catalog().get(sorted[0]!)).toMatchObject({ verified_date: '2026-01-03T00:00:00.000Z', fixity: 'ok' });
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual([sorted[2], sorted[4], sorted[3], sorted[1], sorted[0]]);
    });

    it('puts a file whose reading a run began and never recorded first, before the never-verified ones; its record clears that', async () => {
      // sorted[3]: verified, not the oldest; a run began reading it and died.
      await catalog().auditReading(sorted[3]!, '2026-01-02T00:00:01.000Z');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual([sorted[3], sorted[2], sorted[4], sorted[3], sorted[1], sorted[0]]);
      // Listed again in its own range: a run that records it first no longer meets it there (its date is past the bound).
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/mag/')).toEqual([sorted[2], sorted[1]]);
      // Noted again by the next run (a second note of one file is one row), then recorded.
      await catalog().auditReading(sorted[3]!, '2026-01-02T00:00:02.000Z');
      await catalog().recordFixity(sorted[3]!, '2026-01-01T00:00:03.000Z', 'ok');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toEqual([sorted[2], sorted[4], sorted[3], sorted[1], sorted[0]]);
    });

    it('keeps to a path prefix, in both ranges', async () => {
      const under = async (prefix: string) => (await queue(catalog(), '2030-01-01T00:00:00.000Z')).filter((p) => p.startsWith(prefix));
      // imap/mag/: one never verified, one verified (the earlier steps), the never-verified first.
      expect(await under('imap/mag/')).toEqual([sorted[2], sorted[1]]);
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/mag/', 1)).toEqual([sorted[2], sorted[1]]);
      await catalog().recordFixity(sorted[2]!, '2026-01-04T00:00:00.000Z', 'ok');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/mag/', 1)).toEqual([sorted[1], sorted[2]]);
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/mag/l2/')).toEqual([sorted[2]]);
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/swe/')).toEqual(await under('imap/swe/'));
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z', 'imap/nothing/')).toEqual([]);
      for (const path of sorted) if ((await catalog().get(path))?.verified_date === undefined) await catalog().recordFixity(path, '2026-01-05T00:00:00.000Z', 'ok');
      expect(await catalog().fixityStatus()).toEqual({ mismatch: 0, missing: 1, oldestVerified: '2026-01-01T00:00:01.000Z', neverVerified: false });
      expect(await catalog().countVerified()).toBe(sorted.length);
    });

    it('leaves withdrawn files out: their bytes are evidence, and a purge deletes them', async () => {
      const withdrawn = recordOf('imap_swe_l1a_sci_20240108_20240108_v00-01.cdf');
      expect(await catalog().insert(withdrawn)).toBe('inserted');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).toContain(withdrawn.file_path);
      const tombstone = { withdrawn_date: '2026-01-06T00:00:00.000Z', withdrawn_reason: 'test', withdrawn_by: 'curator' };
      expect((await catalog().withdraw(withdrawn.file_path, tombstone)).outcome).toBe('withdrawn');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).not.toContain(withdrawn.file_path);
      // Never verified, yet no file the audit owes: the metrics say none is waiting.
      expect(await catalog().fixityStatus()).toMatchObject({ neverVerified: false, oldestVerified: '2026-01-01T00:00:01.000Z' });
      await catalog().recordFixity(withdrawn.file_path, '2026-01-01T00:00:00.000Z', 'ok');
      expect(await queue(catalog(), '2030-01-01T00:00:00.000Z')).not.toContain(withdrawn.file_path);
    });
  });
}
