import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { describeInBrowser, openPage, seededServer, storedPathOf } from './portal-fixture.js';

/*
 * Team-only files in the portal (docs/portal.md "Team-only files"): where the mission shows team
 * records (embargoedMetadata "public"), a team file's row carries a "Team only" badge in words and
 * its release date, or says none is set; a released file has no badge.
 */
const PUBLIC = 'imap_mag_l2_norm_20240105_20240105_v01-00.cdf';
const HELD = 'imap_mag_l1a_norm_20240106_20240106_v01-00.cdf';
const SCHEDULED = 'imap_mag_l1a_norm_20240107_20240107_v01-00.cdf';
const LATER = '2031-06-01T00:00:00.000Z';

const dir = mkdtempSync(join(tmpdir(), 'sdc-portal-team-'));
writeFileSync(
  join(dir, 'mission.json'),
  JSON.stringify({ ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'public' } }),
);

describeInBrowser('portal: team-only files', (viewport, browser) => {
  const server = seededServer(Object.fromEntries([PUBLIC, HELD, SCHEDULED].map((name) => [name, `bytes of ${name}\n`])), { missionConfig: join(dir, 'mission.json') });

  // One team file scheduled by a release (docs/api.md "Releases"), made through the curator's route;
  // and a published release of the public file.
  beforeAll(async () => {
    const { key } = await server().ctx.catalog.keys().create(`curator-${viewport.name}`, 'curator');
    const make = (body: object) =>
      fetch(`${server().url}/releases`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await make({ title: 'Later', files: [storedPathOf(SCHEDULED)], release_date: LATER })).status).toBe(201);
    expect((await make({ title: 'MAG L2 <first light>', description: 'The first week of MAG L2.', files: [PUBLIC] })).status).toBe(201);
  });

  it('badges each team-only file in words with its release date, and no released one', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?instrument=mag&page=1`);
    const rows = page.locator('#results tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(3);
    expect(await page.locator('#results .badge-team').count()).toBe(2);
    expect(await rows.filter({ hasText: PUBLIC }).locator('.badge-team').count()).toBe(0);
    const held = rows.filter({ hasText: HELD }).locator('.team-only');
    expect((await held.textContent())?.replace(/\s+/g, ' ').trim()).toBe('Team only no release date set');
    const scheduled = rows.filter({ hasText: SCHEDULED }).locator('.team-only');
    expect((await scheduled.textContent())?.replace(/\s+/g, ' ').trim()).toBe('Team only public from 2031-06-01 00:00Z');
    expect(await scheduled.locator('.badge-team').isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await close();
  });

  it('lists the published releases, newest first, with their manifest, Metalink, DataCite and a search for their files', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/#releases`);
    const items = page.locator('#releases-list > li');
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(1);
    const item = items.first();
    // Text shown as text: the title's angle brackets are not markup.
    expect(await item.locator('h3').textContent()).toBe('Release 2: MAG L2 <first light>');
    expect(await item.locator('.release-meta').textContent()).toMatch(/^published \S+ \S+ · 1 file · \d+ B$/);
    expect(await item.getByRole('link', { name: 'Manifest (CSV)' }).getAttribute('href')).toBe('/releases/2?format=csv');
    expect(await item.getByRole('link', { name: 'DataCite' }).getAttribute('href')).toBe('/releases/2?format=datacite');
    expect(await page.locator('#releases-status').textContent()).toBe('1 release, newest first.');
    await item.getByRole('link', { name: 'Search its files' }).click();
    await expect.poll(() => page.locator('#results tbody tr').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('#results tbody tr').textContent()).toContain(PUBLIC);
    expect(problems).toEqual([]);
    await close();
  });
});
