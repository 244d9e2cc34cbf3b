import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFor, type Catalog, type FileRecord, type ReleaseDraft } from '../../src/catalog/index.js';
import { REPEAT_WINDOW_MS } from '../../src/catalog/release-repeats.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * A release asked for again (docs/api.md "Releases", *A repeated request*;
 * src/catalog/release-repeats.ts): the same curator's identical draft within the window is
 * answered with the release made, writing nothing; any difference makes a new release.
 */

function teamRecord(fileName: string): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  return recordFor(parsed.value, { ingestion_date: new Date(Date.now() - 3_600_000).toISOString(), size: 10, sha256: 'ef'.repeat(32), release_date: undefined });
}

export function describeCatalogReleaseRepeats(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog release repeats: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const [a, b, c] = [1, 2, 3].map((d) => teamRecord(`imap_glows_l2_sci_2024090${d}_2024090${d}_v00-01.cdf`)) as [FileRecord, FileRecord, FileRecord];
    const draft = (more: Partial<ReleaseDraft> = {}): ReleaseDraft => {
      const now = new Date().toISOString();
      return { title: 'Repeated', kind: 'release', release_date: now, created_by: 'curator-r', created_at: now, source: { paths: [a.file_path, b.file_path] }, exclude: [], ...more };
    };
    beforeAll(async () => {
      subject = await make();
      await catalog().insertMany([a, b, c]);
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('answers the same curator\'s identical draft with the release made, writing nothing; by paths or by a query giving the same manifest', async () => {
      const first = await catalog().createRelease(draft());
      expect(first).toMatchObject({ number: 1, file_count: 2 });
      expect(first?.repeat).toBeUndefined();
      const again = await catalog().createRelease(draft({ source: { paths: [b.file_path, a.file_path] } }));
      expect(again).toMatchObject({ number: 1, repeat: true, created_at: first!.created_at });
      const byQuery = await catalog().createRelease(draft({ source: { filter: { instrument: 'glows' } }, exclude: [c.file_path] }));
      expect(byQuery).toMatchObject({ number: 1, repeat: true });
      expect((await catalog().releases()).map((r) => r.number)).toEqual([1]);
    });

    it('makes a new release for any difference: title, description, kind, curator, manifest, a scheduled date', async () => {
      const later = new Date(Date.now() + 3_600_000).toISOString();
      const differing: Partial<ReleaseDraft>[] = [
        { title: 'Another title' },
        { description: 'described' },
        { kind: 'early-release' },
        { created_by: 'curator-s' },
        { source: { paths: [a.file_path] } },
        { release_date: later },
      ];
      for (const more of differing) expect(await catalog().createRelease(draft(more)), JSON.stringify(more)).not.toHaveProperty('repeat');
      // The scheduled one asked again with its date is a repeat; with another date it is not.
      expect(await catalog().createRelease(draft({ release_date: later }))).toMatchObject({ number: 7, repeat: true });
      expect(await catalog().createRelease(draft({ release_date: new Date(Date.parse(later) + 1000).toISOString() }))).not.toHaveProperty('repeat');
    });

    it('makes a new release when the earlier one is retracted, or older than the window', async () => {
      expect(await catalog().retractRelease(1, { date: new Date().toISOString(), reason: 'r', by: 'curator-r' }, { default: 'team', rules: [], embargoedMetadata: 'hidden' })).toMatchObject({ outcome: 'retracted' });
      const afterRetraction = await catalog().createRelease(draft());
      expect(afterRetraction).not.toHaveProperty('repeat');
      // As if asked again once the window has passed: its created_at that much later.
      const past = new Date(Date.now() + REPEAT_WINDOW_MS + 60_000).toISOString();
      expect(await catalog().createRelease(draft({ created_at: past }))).not.toHaveProperty('repeat');
    });
  });
}
