import type { Locator } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { RESULTS_DIR } from '../helpers/browser.js';
import { describeInBrowser, LONG_DESCRIPTOR, openPage, seededServer, sidewaysOverflow, storedPathOf } from './portal-fixture.js';

const magName = (day: string, version = 'v01-00') => `imap_mag_l2_norm_202401${day}_202401${day}_${version}.cdf`;
/** A long name, withdrawn without a replacement: the note and the struck row still fit a phone. */
const LONG = `imap_mag_l2_${LONG_DESCRIPTOR}_20240108_20240108_v01-00.cdf`;
const REPLACED = magName('05');
const REPLACEMENT = magName('05', 'v01-01');
const CURRENT = magName('07');
const SEEDS = [REPLACED, REPLACEMENT, CURRENT, LONG];
const REASON = 'Wrong calibration table (cal v3 instead of v4); every count is 8 % too high';
const LONG_REASON = `Timing offset of 2.5 s found after ingestion. ${'Re-processing is under way for the whole week. '.repeat(3)}`.trim();
const CURATOR = 'curator-ana';

/** How an element's text is decorated (line-through: struck), as the browser computed it; the tests compile without the DOM library. */
const decoration = (element: Locator) =>
  element.evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { textDecorationLine: string } }).getComputedStyle(e).textDecorationLine);

/** The rows of the results table holding a file (not the notes under withdrawn ones), by file name. */
const fileRows = '#results tbody tr:not(.withdrawn-note)';

describeInBrowser('portal: withdrawn files', (viewport, browser) => {
  const server = seededServer(Object.fromEntries(SEEDS.map((name) => [name, `bytes of ${name}\n`])));

  // Two files withdrawn through the curator's route (docs/api.md "Withdrawn files"), as a curator would.
  let withdrawnDay = '';
  beforeAll(async () => {
    const { key } = await server().ctx.catalog.keys().create(CURATOR, 'curator');
    const withdraw = (name: string, body: object) =>
      fetch(`${server().url}/withdraw/${storedPathOf(name)}`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await withdraw(REPLACED, { reason: REASON, superseded_by: REPLACEMENT })).status).toBe(200);
    const last = await withdraw(LONG, { reason: LONG_REASON });
    expect(last.status).toBe(200);
    withdrawnDay = ((await last.json()) as { withdrawn_date: string }).withdrawn_date.slice(0, 10);
  });

  it('leaves withdrawn files out by default, shows them struck through with reason, date and replacement on asking, and keeps that in the address', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?instrument=mag&page=1`);
    await expect.poll(() => page.locator(fileRows).count(), { timeout: 10_000 }).toBe(2);
    expect(await page.locator('#results .badge-withdrawn').count()).toBe(0);
    expect(await page.locator('#metalink-link').textContent()).toBe('Download these 2 files');
    expect(await page.locator('#withdrawn-left-out').isVisible()).toBe(false);

    // Ask for them: a labelled choice of the form, sent as status=any and kept in the address.
    await page.getByLabel('Withdrawn files').selectOption({ label: 'Show too' });
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator(fileRows).count()).toBe(4);
    expect(new URL(page.url()).searchParams.get('status')).toBe('any');
    expect(await page.locator('#results tr.withdrawn-note').count()).toBe(2);

    // The replaced file: badge in words, name struck through (<del>), not a download link.
    const replaced = page.locator(fileRows, { hasText: REPLACED });
    const header = replaced.locator('th');
    expect(await header.locator('.badge-withdrawn').textContent()).toBe('Withdrawn');
    expect(await header.locator('del').textContent()).toBe(REPLACED);
    expect(await header.locator('a').count()).toBe(0);
    expect(await decoration(header.locator('del'))).toBe('line-through');
    // A screen reader hears the note with the row's name: the row header is described by it.
    const noteId = await header.getAttribute('aria-describedby');
    const note = page.locator(`[id="${noteId}"]`);
    const text = (await note.textContent()) ?? '';
    expect(text).toContain(`Withdrawn on ${withdrawnDay}`);
    expect(text).toContain(`by ${CURATOR}`);
    expect(text).toContain(REASON);
    expect(text).toContain(`Replaced by ${REPLACEMENT}`);
    expect(await note.getByRole('link', { name: REPLACEMENT, exact: true }).getAttribute('href')).toBe(`/download/${storedPathOf(REPLACEMENT)}`);
    expect(await note.isVisible()).toBe(true);

    // The long one, withdrawn with no replacement.
    const longNote = page.locator(`[id="${await page.locator(fileRows, { hasText: LONG }).locator('th').getAttribute('aria-describedby')}"]`);
    expect(await longNote.textContent()).toContain(LONG_REASON);
    expect(await longNote.textContent()).toContain('No replacement named.');
    // The current files are as before: a download link each, nothing struck.
    const current = page.locator(fileRows, { hasText: CURRENT });
    expect(await current.locator('th a').getAttribute('href')).toBe(`/download/${storedPathOf(CURRENT)}`);
    expect(await decoration(current.locator('th a'))).not.toContain('line-through');

    // Readable at this size: nothing wider than the window, and every column of the table in view.
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    const table = await page.locator('#results').evaluate((t) => [t.scrollWidth, t.parentElement!.clientWidth]);
    expect(table[0]).toBeLessThanOrEqual(table[1]!);
    await page.locator('#results-region').screenshot({ path: `${RESULTS_DIR}/portal-withdrawn-${viewport.name}.png` });

    // A reload keeps the choice (the address is the search); Back returns to the search without them.
    await page.reload();
    await expect.poll(() => page.locator(fileRows).count()).toBe(4);
    expect(await page.getByLabel('Withdrawn files').inputValue()).toBe('any');
    await page.goBack();
    await expect.poll(() => page.locator(fileRows).count()).toBe(2);
    expect(await page.getByLabel('Withdrawn files').inputValue()).toBe('');
    await close();
    expect(problems).toEqual([]);
  });

  it('offers only archived files in the Metalink and the sdc command, and nothing when only withdrawn files are shown', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?instrument=mag&status=any&page=1`);
    await expect.poll(() => page.locator(fileRows).count()).toBe(4);
    const metalink = page.locator('#metalink-link');
    expect(await metalink.textContent()).toBe('Download the 2 archived files');
    const href = (await metalink.getAttribute('href'))!;
    expect(new URL(href, server().url).searchParams.get('status')).toBeNull();
    const document = await (await fetch(new URL(href, server().url))).text();
    const listed = [...document.matchAll(/<file name="([^"]+)"/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([storedPathOf(CURRENT), storedPathOf(REPLACEMENT)].sort());
    const command = (await page.locator('#sdc-command').textContent()) ?? '';
    expect(command).toBe(`sdc download --query --instrument mag --url ${server().url}`);
    expect(await page.locator('#withdrawn-left-out').textContent()).toBe('Withdrawn files are left out of the Metalink and the command: they are never offered for download.');

    // Only withdrawn files: no download action at all, and words saying why.
    await page.goto(`${server().url}/?instrument=mag&status=withdrawn&page=1`);
    await expect.poll(() => page.locator(fileRows).count()).toBe(2);
    expect(await page.locator('#results .badge-withdrawn').count()).toBe(2);
    expect(await page.getByLabel('Withdrawn files').inputValue()).toBe('withdrawn');
    await expect.poll(() => page.locator('#withdrawn-left-out').textContent()).toBe('These files are withdrawn: never offered for download.');
    expect(await metalink.isVisible()).toBe(false);
    expect(await page.locator('#sdc-command').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Copy as an sdc download command' }).isVisible()).toBe(false);
    await close();
    expect(problems).toEqual([]);
  });

  it('leads from a withdrawn file to its replacement\'s record', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?file_path=${REPLACED}&status=any&page=1`);
    await expect.poll(() => page.locator(fileRows).count()).toBe(1);
    await page.getByRole('link', { name: `Show the record of ${REPLACEMENT}` }).click();
    await expect.poll(() => page.locator(fileRows).textContent()).toContain(REPLACEMENT);
    expect(await page.locator(fileRows).count()).toBe(1);
    expect(await page.locator('#results .badge-withdrawn').count()).toBe(0);
    // Its link downloads the replacement's bytes.
    const res = await fetch(`${server().url}${await page.locator(`${fileRows} th a`).getAttribute('href')}`);
    expect(await res.text()).toBe(`bytes of ${REPLACEMENT}\n`);
    await close();
    expect(problems).toEqual([]);
  });
});
