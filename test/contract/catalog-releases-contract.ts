import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFor, type Catalog, type FileRecord, type ReleaseDraft } from '../../src/catalog/index.js';
import { IMAP_MISSION, parseFileName, releaseDateAtIngest, type AccessPolicy } from '../../src/mission/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * Numbered releases in the catalog (docs/api.md "Releases"): the next number under concurrency,
 * the manifest from paths or a query (latest versions first, then exclude), the files' release
 * date and number, `release=N` answering exactly the manifest whatever happens later, the
 * 'released' and 'retracted' entries, a retraction's fallbacks (another release, the policy).
 */

const HOUR = 3_600_000;
const INGESTED = new Date(Date.now() - 2 * HOUR).toISOString();

function teamRecord(fileName: string, size = 10): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  // A team file without a date: it waits for a release.
  return recordFor(parsed.value, { ingestion_date: INGESTED, size, sha256: 'cd'.repeat(32), release_date: undefined });
}

async function paths(items: AsyncIterable<FileRecord>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) out.push(item.file_path);
  return out;
}

const draft = (source: ReleaseDraft['source'], more: Partial<ReleaseDraft> = {}): ReleaseDraft => ({
  title: 'A release',
  kind: 'release',
  release_date: new Date().toISOString(),
  created_by: 'curator-1',
  created_at: new Date().toISOString(),
  source,
  exclude: [],
  ...more,
});

export function describeCatalogReleases(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog releases: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const v1 = teamRecord('imap_codice_l2_sci_20240801_20240801_v00-01.cdf', 100);
    const v2 = teamRecord('imap_codice_l2_sci_20240801_20240801_v00-02.cdf', 200);
    const other = teamRecord('imap_codice_l2_sci_20240802_20240802_v00-01.cdf', 300);
    const lo = teamRecord('imap_lo_l2_sci_20240801_20240801_v00-01.cdf', 400);
    // The team holds every file, with no embargo: a retracted file returns to no date.
    const noPolicy: AccessPolicy = { default: 'team', rules: [], embargoedMetadata: 'hidden' };
    // Given by the concurrent test: which of 2 and 3 each got.
    let v1Release = 0;
    let loRelease = 0;
    beforeAll(async () => {
      subject = await make();
      await catalog().insertMany([v1, v2, other, lo]);
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('makes releases from a query: the latest version of each product, then exclude (never promoting an older version)', async () => {
      const made = await catalog().createRelease(draft({ filter: { instrument: 'codice', version: 'latest' } }, { exclude: [v2.file_path] }));
      expect(made).toMatchObject({ number: 1, file_count: 1, bytes: 300, kind: 'release', created_by: 'curator-1' });
      expect(await paths(catalog().query({ release: '1' }))).toEqual([other.file_path]);
      expect(await catalog().releaseManifest(1, undefined, 10)).toEqual([{ file_path: other.file_path, size: 300, sha256: 'cd'.repeat(32) }]);
      // Public now, by release 1; the others are still the team's.
      expect(await catalog().get(other.file_path)).toMatchObject({ release: 1 });
      expect(await paths(catalog().query({ instrument: 'codice', audience: 'public' }))).toEqual([other.file_path]);
      const released = (await catalog().changes(0, 100, { audience: 'public' })).filter((e) => e.change === 'released');
      expect(released.map((e) => e.file_path)).toEqual([other.file_path]);
    });

    it('gives concurrent releases distinct numbers; an empty manifest writes nothing', async () => {
      const [a, b] = await Promise.all([
        catalog().createRelease(draft({ paths: [v1.file_path] })),
        catalog().createRelease(draft({ paths: [lo.file_path, lo.file_path] })),
      ]);
      expect([a!.number, b!.number].sort()).toEqual([2, 3]);
      v1Release = a!.number;
      loRelease = b!.number;
      expect([a!.file_count, b!.file_count]).toEqual([1, 1]);
      expect(await catalog().createRelease(draft({ paths: [v2.file_path] }, { exclude: [v2.file_path] }))).toBeUndefined();
      expect((await catalog().releases()).map((r) => r.number)).toEqual([1, 2, 3]);
    });

    it('a scheduled release: its files stay the team\'s until its date, with no entry logged before', async () => {
      const later = new Date(Date.now() + HOUR).toISOString();
      const made = await catalog().createRelease(draft({ paths: [v2.file_path] }, { release_date: later, kind: 'early-release' }));
      expect(made).toMatchObject({ number: 4, release_date: later, kind: 'early-release' });
      // Its number is set when its date comes (announceDue): no record names a release before it is published.
      expect(await catalog().get(v2.file_path)).toMatchObject({ release_date: later });
      expect((await catalog().get(v2.file_path))?.release).toBeUndefined();
      expect(await paths(catalog().query({ file_path: v2.file_path, audience: 'public' }))).toEqual([]);
      expect(await catalog().announceDue()).toBe(0);
    });

    it('release=N answers exactly the manifest forever: a withdrawn file stays in it', async () => {
      expect((await catalog().withdraw(v1.file_path, { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'bad', withdrawn_by: 'c' })).outcome).toBe('withdrawn');
      expect(await paths(catalog().query({ release: String(v1Release), status: 'any' }))).toEqual([v1.file_path]);
      expect(await paths(catalog().query({ release: String(v1Release) }))).toEqual([]);
      expect(await paths(catalog().query({ release: String(v1Release), status: 'withdrawn' }))).toEqual([v1.file_path]);
    });

    it('retracts once: files go back to the team (or to another release, or to the policy), each lost file logged as retracted', async () => {
      // lo is also in release 5 (its first release is 2 or 3); v2's scheduled release 4 stays.
      // Another title: the same curator's identical release minutes later would be a repeat (release-repeats.ts).
      const five = await catalog().createRelease(draft({ paths: [lo.file_path] }, { title: 'Lo again' }));
      expect(five?.number).toBe(5);
      expect(await catalog().get(lo.file_path)).toMatchObject({ release: loRelease });
      const retraction = { date: new Date().toISOString(), reason: 'superseded', by: 'curator-2' };
      const outcome = await catalog().retractRelease(loRelease, retraction, noPolicy);
      expect(outcome).toMatchObject({ outcome: 'retracted', release: { number: loRelease, retracted_reason: 'superseded', retracted_by: 'curator-2' } });
      // Covered by release 5: still public, now by it; no entry.
      expect(await catalog().get(lo.file_path)).toMatchObject({ release: 5, release_date: five!.release_date });
      const retractOne = await catalog().retractRelease(1, retraction, noPolicy);
      expect(retractOne.outcome).toBe('retracted');
      const back = await catalog().get(other.file_path);
      expect(back?.release_date).toBeUndefined();
      expect(back?.release).toBeUndefined();
      expect(await paths(catalog().query({ instrument: 'codice', audience: 'public' }))).toEqual([]);
      const retracted = (await catalog().changes(0, 100, { audience: 'public' })).filter((e) => e.change === 'retracted');
      expect(retracted.map((e) => e.file_path)).toEqual([other.file_path]);
      // The manifest stays; a second retraction changes nothing.
      expect(await paths(catalog().query({ release: '1' }))).toEqual([other.file_path]);
      expect(await catalog().retractRelease(1, retraction, noPolicy)).toMatchObject({ outcome: 'already_retracted', release: { number: 1 } });
      expect(await catalog().retractRelease(99, retraction, noPolicy)).toEqual({ outcome: 'not_found' });
    });

    it('a retracted file the policy makes public falls back to the policy\'s date', async () => {
      await catalog().retractRelease(5, { date: new Date().toISOString(), reason: 'r', by: 'c' }, { default: 'team', rules: [{ match: { instrument: ['lo'], data_level: ['l2'] }, access: 'public' }], embargoedMetadata: 'hidden' });
      expect(await catalog().get(lo.file_path)).toMatchObject({ release_date: lo.ingestion_date });
      expect((await catalog().get(lo.file_path))?.release).toBeUndefined();
    });

    it('a withdrawn file whose release is retracted is never released again, whatever date the policy gives', async () => {
      const gone = teamRecord('imap_codice_l2_sci_20240803_20240803_v00-01.cdf');
      await catalog().insertMany([gone]);
      const made = (await catalog().createRelease(draft({ paths: [gone.file_path] })))!;
      const tombstone = { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'test', withdrawn_by: 'curator' };
      expect((await catalog().withdraw(gone.file_path, tombstone)).outcome).toBe('withdrawn');
      // The embargo the policy would give it ends a day after its ingestion (2 hours ago).
      const embargo: AccessPolicy = { default: 'team', rules: [], embargoDays: 1, embargoedMetadata: 'hidden' };
      await catalog().retractRelease(made.number, { date: new Date().toISOString(), reason: 'r', by: 'c' }, embargo);
      const record = await catalog().get(gone.file_path);
      expect(record?.release_date).toBeUndefined();
      expect(record?.release).toBeUndefined();
      const retracted = (await catalog().changes(0, 1000, { audience: 'public' })).filter((e) => e.file_path === gone.file_path).map((e) => e.change);
      expect(retracted).toEqual(['released', 'withdrawn', 'retracted']);
    });

    it('checks and makes a release of a few thousand named files a page at a time, naming every unknown and withdrawn one', async () => {
      const many = Array.from({ length: 3000 }, (_, i) => {
        const date = new Date(Date.UTC(2010, 0, 1) + i * 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
        return teamRecord(`imap_hit_l2_sci_${date}_${date}_v00-01.cdf`, 1);
      });
      expect(await catalog().insertMany(many)).toBe(many.length);
      const tombstone = { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'test', withdrawn_by: 'curator' };
      for (const at of [7, 2999]) expect((await catalog().withdraw(many[at]!.file_path, tombstone)).outcome).toBe('withdrawn');
      const unknown = (n: number) => `imap/hit/l2/2099/01/imap_hit_l2_sci_209901${n}_209901${n}_v00-01.cdf`;
      const named = [unknown(10), ...many.slice(0, 1500).map((r) => r.file_path), unknown(11), ...many.slice(1500).map((r) => r.file_path), unknown(12)];
      expect(await catalog().unreleasable(named)).toEqual([
        { path: unknown(10), why: 'unknown' },
        { path: many[7]!.file_path, why: 'withdrawn' },
        { path: unknown(11), why: 'unknown' },
        { path: many[2999]!.file_path, why: 'withdrawn' },
        { path: unknown(12), why: 'unknown' },
      ]);
      const archived = many.filter((_, i) => i !== 7 && i !== 2999).map((r) => r.file_path);
      expect(await catalog().unreleasable(archived)).toEqual([]);
      const made = await catalog().createRelease(draft({ paths: archived }));
      expect(made).toMatchObject({ file_count: archived.length, bytes: archived.length });
      expect(await catalog().count({ instrument: 'hit', audience: 'public' })).toBe(archived.length);
      // Its retraction: set-based, each file back to the policy's date (an embargo of 3 days here, as
      // releaseDateAtIngest gives it), every file the public loses logged in file_path order.
      const before = await catalog().lastChangeId();
      const embargo: AccessPolicy = { default: 'public', rules: [{ match: { instrument: ['hit'] }, access: 'team' }], embargoDays: 3, embargoedMetadata: 'hidden' };
      expect(await catalog().retractRelease(made!.number, { date: new Date().toISOString(), reason: 'r', by: 'c' }, embargo)).toMatchObject({ outcome: 'retracted' });
      const sample = (await catalog().get(archived[1234]!))!;
      expect(sample.release_date).toBe(releaseDateAtIngest(embargo, sample as never, sample.ingestion_date));
      expect(sample.release).toBeUndefined();
      const entries = await catalog().changes(before, 5000, { audience: 'public' });
      expect(entries.map((e) => e.change)).toEqual(archived.map(() => 'retracted'));
      expect(entries.map((e) => e.file_path)).toEqual([...archived].sort());
      expect(JSON.parse(entries[1234]!.record)).toEqual(sample);
      expect(await catalog().count({ instrument: 'hit', audience: 'public' })).toBe(0);
    });

    it('a scheduled release retracted: its files return to the team, and the public, which never saw them, reads no entry', async () => {
      const before = await catalog().lastChangeId();
      expect(await catalog().retractRelease(4, { date: new Date().toISOString(), reason: 'r', by: 'c' }, noPolicy)).toMatchObject({ outcome: 'retracted' });
      const record = await catalog().get(v2.file_path);
      expect(record?.release_date).toBeUndefined();
      expect(await catalog().changes(before, 10)).toEqual([]);
    });
  });
}
