import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFor, type Catalog, type FileRecord, type QueryFilter } from '../../src/catalog/index.js';
import { IMAP_MISSION, parseFileName } from '../../src/mission/index.js';
import { SqlCatalog } from '../../src/catalog/sql-catalog.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/*
 * Who sees what in the catalog (docs/api.md "Who sees what"): the audience's SQL fragment on every
 * read (query, count, coverage, version=latest), released=, the 'released' entries logged once
 * by publish and by the background step (announceDue), the change log's public entries, and
 * what a withdrawal does to a file's release.
 */

const HOUR = 3_600_000;
function recordOf(fileName: string, release_date: string | undefined): FileRecord {
  const parsed = parseFileName(fileName, IMAP_MISSION);
  if (!parsed.ok) throw new Error(parsed.message);
  return recordFor(parsed.value, { ingestion_date: new Date(Date.now() - 2 * HOUR).toISOString(), size: 1, sha256: 'ab'.repeat(32), release_date });
}

async function paths(items: AsyncIterable<FileRecord>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) out.push(item.file_path);
  return out;
}

export function describeCatalogVisibility(label: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`catalog visibility: ${label}`, () => {
    let subject: CatalogUnderTest;
    const catalog = (): Catalog => subject.catalog;
    const pub = recordOf('imap_hit_l1a_sci_20240701_20240701_v00-01.cdf', undefined);
    const newer = recordOf('imap_hit_l1a_sci_20240701_20240701_v00-02.cdf', undefined);
    const embargoed = recordOf('imap_hit_l1a_sci_20240702_20240702_v00-01.cdf', undefined);
    const held = recordOf('imap_hit_l1a_sci_20240703_20240703_v00-01.cdf', undefined);
    const scheduled = recordOf('imap_hit_l1a_sci_20240704_20240704_v00-01.cdf', undefined);
    const unannounced = recordOf('imap_hit_l1a_sci_20240705_20240705_v00-01.cdf', undefined);
    beforeAll(async () => {
      subject = await make();
      // Public at ingest: its date is its ingestion date; an embargo that ended a moment ago; a team file without a date.
      await catalog().insertMany([
        { ...pub, release_date: pub.ingestion_date },
        newer,
        { ...embargoed, release_date: new Date(Date.now() - 1000).toISOString() },
        held,
      ]);
    });
    afterAll(async () => {
      await subject?.dispose();
    });
    const anon: QueryFilter = { instrument: 'hit', audience: 'public' };

    it('a caller without a key reads released files only, in queries, counts, coverage and version=latest', async () => {
      expect(await paths(catalog().query(anon))).toEqual([pub.file_path, embargoed.file_path]);
      expect(await catalog().count(anon)).toBe(2);
      expect(await catalog().count({ instrument: 'hit' })).toBe(4);
      expect(await paths(catalog().query({ ...anon, version: 'latest' }))).toEqual([pub.file_path, embargoed.file_path]);
      expect(await paths(catalog().query({ instrument: 'hit', version: 'latest' }))).toEqual([newer.file_path, embargoed.file_path, held.file_path]);
      let files = 0;
      for await (const day of catalog().coverage(anon)) files += day.files;
      expect(files).toBe(2);
      expect(await paths(catalog().query({ instrument: 'hit', released: false }))).toEqual([newer.file_path, held.file_path]);
    });

    it('logs an ended embargo once as a public `released` entry, and a release at once; the public log never holds a team creation', async () => {
      expect(await catalog().announceDue()).toBe(1);
      expect(await catalog().announceDue()).toBe(0);
      expect(await catalog().publish([newer.file_path, pub.file_path], new Date().toISOString(), 7)).toBe(1);
      const record = await catalog().get(newer.file_path);
      expect(record).toMatchObject({ release: 7 });
      expect((await catalog().get(pub.file_path))!.release).toBeUndefined();
      const everything = await catalog().changes(0, 100);
      const publicOnes = await catalog().changes(0, 100, { audience: 'public' });
      expect(publicOnes.map((e) => [e.change, e.file_path])).toEqual([
        ['created', pub.file_path],
        ['released', embargoed.file_path],
        ['released', newer.file_path],
      ]);
      expect(everything.filter((e) => e.change === 'created')).toHaveLength(4);
      expect((await catalog().changesJson(0, 2, 'public')).nextAfter).toBe(publicOnes[1]!.id);
      expect(await paths(catalog().query({ ...anon, version: 'latest' }))).toEqual([newer.file_path, embargoed.file_path]);
      // A scheduled release: public only once its date has come.
      expect(await catalog().publish([held.file_path], new Date(Date.now() + HOUR).toISOString(), 8)).toBe(1);
      expect(await catalog().count(anon)).toBe(3);
      expect(await catalog().announceDue()).toBe(0);
    });

    it('a withdrawal keeps a file the public never saw from it, and logs a due release before the withdrawal', async () => {
      const tombstone = { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'test', withdrawn_by: 'curator' };
      const hour = new Date(Date.now() + HOUR).toISOString();
      // A release scheduled an hour on, then the file withdrawn: its date and release go, so it never becomes due.
      await catalog().insertMany([scheduled]);
      await catalog().publish([scheduled.file_path], hour, 9);
      expect((await catalog().withdraw(scheduled.file_path, tombstone)).outcome).toBe('withdrawn');
      const tomb = await catalog().get(scheduled.file_path);
      expect(tomb?.release_date).toBeUndefined();
      expect(tomb?.release).toBeUndefined();
      // An embargo that ended before the background step announced it: its 'released' entry comes first.
      await catalog().insertMany([{ ...unannounced, release_date: new Date(Date.now() - 1000).toISOString() }]);
      const before = await catalog().lastChangeId();
      expect((await catalog().withdraw(unannounced.file_path, tombstone)).outcome).toBe('withdrawn');
      expect(await catalog().announceDue()).toBe(0);
      const publicOnes = await catalog().changes(before, 100, { audience: 'public' });
      expect(publicOnes.map((e) => [e.change, e.file_path])).toEqual([
        ['released', unannounced.file_path],
        ['withdrawn', unannounced.file_path],
      ]);
      expect(JSON.stringify(await catalog().changes(0, 100, { audience: 'public' }))).not.toContain(scheduled.file_path);
    });

    it('path-order reads with no selective filter (version=*, a descriptor, ingestion since) give the public exactly its files', async () => {
      // An embargo still running (dated ahead), beside the held, released, withdrawn and public files above:
      // migration 0016's indexes hold the dated archived files, and a date set later (a release) moves a file in.
      const ahead = recordOf('imap_hit_l1a_sci_20240706_20240706_v00-01.cdf', undefined);
      await catalog().insertMany([{ ...ahead, release_date: new Date(Date.now() + HOUR).toISOString() }]);
      const now = new Date().toISOString();
      const all: FileRecord[] = [];
      for await (const record of catalog().query({ version: '*' })) all.push(record);
      const theirs = all.filter((r) => r.release_date !== undefined && r.release_date <= now).map((r) => r.file_path);
      expect(theirs.length).toBeGreaterThan(1);
      expect(all.length).toBeGreaterThan(theirs.length);
      const since = new Date(Date.now() - 3 * HOUR).toISOString();
      for (const filter of [{ version: '*' }, { descriptor: 'sci' }, { ingestion_start_date: since }] as QueryFilter[]) {
        expect(await paths(catalog().query({ ...filter, audience: 'public' })), JSON.stringify(filter)).toEqual(theirs);
        expect(await paths(catalog().query({ ...filter, audience: 'public' }, { limit: 1 })), JSON.stringify(filter)).toEqual(theirs.slice(0, 1));
      }
      // SQLite's plan for version=* (which others take depends on each engine's statistics: the bench
      // shows them at 1M, docs/performance.md): the public's path order is read from files_public_path.
      const sqlCatalog = catalog();
      if (sqlCatalog instanceof SqlCatalog) {
        const plan = (await sqlCatalog.explain({ version: '*', audience: 'public' }, { limit: 100 })).join(' / ');
        if (/^(SCAN|SEARCH) /.test(plan)) expect(plan).toContain('files_public_path');
      }
    });
  });
}
