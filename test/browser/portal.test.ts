import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/synthetic-records.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { MAX_LOADED } from '../../web/src/search-limits.js';
import { ensurePortal } from '../helpers/lazy-build.js';
import { hasChromium, launchBrowser, NO_CHROMIUM_MESSAGE, RESULTS_DIR } from '../helpers/browser.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

// The portal's assets as the sources are now (web/build.js runs only when web/ or src/ changed).
await ensurePortal();

if (!hasChromium) console.warn(NO_CHROMIUM_MESSAGE);

const day = (d: number) => `202401${String(d).padStart(2, '0')}`;
const swePath = (date: string) => `imap/swe/l1a/${date.slice(0, 4)}/${date.slice(4, 6)}/imap_swe_l1a_sci_${date}_${date}_v00-01.cdf`;
const magPath = (date: string) => `imap/mag/l2/2024/01/imap_mag_l2_norm_${date}_${date}_v01-00.cdf`;
const HIT_PATH = 'imap/hit/l0/2024/01/imap_hit_l0_raw_20240103_20240103_v00-01.pkts';
const LO_PATH = 'imap/lo/l1b/2024/01/imap_lo_l1b_sci_20240110_20240112_v00-01.cdf';

/** swe l1a: Jan 1-30 and Feb 15-16 (a gap between); mag l2: Jan 5-7; hit l0: Jan 3; lo l1b: one file, Jan 10-12. */
const SEEDS: [string, string][] = [
  ...Array.from({ length: 30 }, (_, i) => swePath(day(i + 1))),
  swePath('20240215'),
  swePath('20240216'),
  ...[5, 6, 7].map((d) => magPath(day(d))),
  HIT_PATH,
  LO_PATH,
].map((path) => [path, `bytes of ${path}\n`]);

const rows = (page: Page) => page.locator('#results tbody tr');
const firstCells = (page: Page) => page.locator('#results tbody th').allTextContents();

describe.skipIf(!hasChromium)('portal in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    server = await startTestServer();
    for (const [path, bytes] of SEEDS) expect((await uploadFile(server.url, path, bytes)).status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    problems = [];
    // Script errors and blocked resources (CSP included) show here. The service's 4xx
    // answers are not problems: tests provoke them and check the page's words for them.
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(msg.text())) problems.push(msg.text());
    });
  });
  afterEach(async () => {
    await page.close();
    expect(problems).toEqual([]);
  });

  it('searches by instrument and dates, shows the rows, and puts the search in the address', async () => {
    await page.goto(server.url);
    await page.getByLabel('Instrument').selectOption('swe');
    await page.getByLabel('Data level').selectOption('l1a');
    await page.getByLabel('Start date from').fill('2024-01-03');
    await page.getByLabel('Start date to').fill('2024-01-05');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('#search-status').textContent()).toContain('3 files match');
    expect(await firstCells(page)).toEqual([3, 4, 5].map((d) => `imap_swe_l1a_sci_${day(d)}_${day(d)}_v00-01.cdf`));
    const address = new URL(page.url()).searchParams;
    expect([address.get('instrument'), address.get('data_level'), address.get('start_date'), address.get('end_date')]).toEqual([
      'swe', 'l1a', '20240103', '20240105',
    ]);
    await page.screenshot({ path: `${RESULTS_DIR}/portal-search.png`, fullPage: true });

    // The address alone brings the same search back (bookmark, shared link).
    await page.goto(page.url());
    await expect.poll(() => rows(page).count()).toBe(3);
    expect(await page.getByLabel('Start date from').inputValue()).toBe('2024-01-03');
  });

  it('sorts by a column, pages through large results, and keeps both in the address', async () => {
    await page.goto(`${server.url}/?instrument=swe&per_page=25&page=1`);
    await expect.poll(() => page.locator('#search-status').textContent()).toContain('32 files match');
    expect(await rows(page).count()).toBe(25);
    await expect.poll(() => page.locator('#page-label').textContent()).toContain('Page 1 of 2');
    await page.getByRole('button', { name: 'Next page' }).click();
    expect(await rows(page).count()).toBe(7);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');

    const start = page.getByRole('columnheader', { name: 'Start' });
    await start.getByRole('button').click();
    await start.getByRole('button').click();
    expect(await start.getAttribute('aria-sort')).toBe('descending');
    expect((await firstCells(page))[0]).toBe('imap_swe_l1a_sci_20240216_20240216_v00-01.cdf');
    const address = new URL(page.url()).searchParams;
    expect([address.get('sort'), address.get('order'), address.get('page')]).toEqual(['start_date', 'desc', '1']);
  });

  it('offers the additive filters: overlap finds a file by a day inside its span', async () => {
    await page.goto(server.url);
    await page.getByLabel('Instrument').selectOption('lo');
    await page.getByLabel('Start date from').fill('2024-01-11');
    await page.getByLabel('Start date to').fill('2024-01-11');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('#search-status').textContent()).toBe('No files match this search.');
    await page.getByText('More filters').click();
    await page.getByLabel('Dates match files whose span overlaps them').check();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => firstCells(page)).toEqual([LO_PATH.slice(LO_PATH.lastIndexOf('/') + 1)]);
    expect(new URL(page.url()).searchParams.get('overlap')).toBe('true');
    await page.reload();
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await page.getByLabel('Dates match files whose span overlaps them').isChecked()).toBe(true);
  });

  it('follows a download link through /download and gets the bytes', async () => {
    await page.goto(`${server.url}/?instrument=mag&page=1`);
    const path = magPath(day(6));
    const link = page.getByRole('link', { name: path.slice(path.lastIndexOf('/') + 1) });
    expect(await link.getAttribute('href')).toBe(`/download/${path}`);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(path.slice(path.lastIndexOf('/') + 1));
    expect(await readFile(await download.path(), 'utf8')).toBe(`bytes of ${path}\n`);
  });

  it('draws the coverage spans, lists them, and a click on a span searches its files', async () => {
    await page.goto(server.url);
    const figure = page.locator('#coverage-figure');
    await figure.waitFor();
    await expect.poll(() => page.locator('#coverage-status').textContent()).toContain('37 files of 4 products');
    const table = await page.locator('#coverage-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 5).map((td) => td.textContent).join(' ')),
    );
    // Mission order (hit, lo, mag, swe), then date.
    expect(table).toEqual([
      'hit l0 2024-01-03 2024-01-03 1',
      'lo l1b 2024-01-10 2024-01-12 1',
      'mag l2 2024-01-05 2024-01-07 3',
      'swe l1a 2024-01-01 2024-01-30 30',
      'swe l1a 2024-02-15 2024-02-16 2',
    ]);

    // Rows from the top: hit l0, lo l1b, mag l2, swe l1a (y values 3, 2, 1, 0).
    const at = (date: string, row: number) => pointOf(page, Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), 12) / 1000, row);
    const blue = (rgba: number[]) => rgba[3]! > 200 && rgba[2]! > 150 && rgba[0]! < 80;
    expect(blue(await pixel(page, await at('20240115', 0)))).toBe(true);
    expect(blue(await pixel(page, await at('20240215', 0)))).toBe(true);
    expect(blue(await pixel(page, await at('20240206', 0)))).toBe(false); // the gap
    expect(blue(await pixel(page, await at('20240106', 1)))).toBe(true);
    expect(blue(await pixel(page, await at('20240115', 1)))).toBe(false); // mag has no Jan 15
    expect(blue(await pixel(page, await at('20240103', 3)))).toBe(true);
    expect(blue(await pixel(page, await at('20240112', 2)))).toBe(true); // a file's last day counts
    expect(blue(await pixel(page, await at('20240113', 2)))).toBe(false);
    await page.locator('#coverage').screenshot({ path: `${RESULTS_DIR}/portal-coverage.png` });

    const point = await at('20240216', 0);
    await page.mouse.click(point.x, point.y);
    await expect.poll(() => page.locator('#search-status').textContent()).toContain('2 files match');
    const address = new URL(page.url()).searchParams;
    expect([address.get('instrument'), address.get('data_level'), address.get('start_date'), address.get('end_date')]).toEqual([
      'swe', 'l1a', '20240215', '20240216',
    ]);

    // The same from the keyboard, through the table.
    await page.locator('#coverage-details summary').press('Enter');
    await page.getByRole('button', { name: /^Search mag l2: 2024-01-05 to 2024-01-07/ }).press('Enter');
    await expect.poll(() => page.locator('#search-status').textContent()).toContain('3 files match');
  });

  it('uploads a file through the page, with the name checks first, and finds it by search', async () => {
    await page.goto(server.url);
    const good = 'imap_codice_l1b_burst_20240320_20240321_v02-03.cdf';
    const badLevel = 'imap_codice_l9_burst_20240320_20240321_v02-03.cdf';
    const badShape = 'notes.txt';
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    await page.getByLabel('Files to upload').setInputFiles([
      { name: good, mimeType: 'application/octet-stream', buffer: bytes },
      { name: badLevel, mimeType: 'application/octet-stream', buffer: Buffer.from('x') },
      { name: badShape, mimeType: 'text/plain', buffer: Buffer.from('x') },
    ]);
    const item = (name: string) => page.locator('#upload-list li', { hasText: name });
    expect(await item(good).locator('.message').textContent()).toBe(
      'Name is valid; will be stored as imap/codice/l1b/2024/03/imap_codice_l1b_burst_20240320_20240321_v02-03.cdf.',
    );
    expect(await item(badLevel).locator('.message').textContent()).toBe(
      'Will not be sent: Invalid data level. Valid data levels are: l0, l1, l1a, l1b, l1c, l1d, l2',
    );
    expect(await item(badShape).locator('.message').textContent()).toContain('Will not be sent: Invalid filename. Expected <mission>_<instrument>');

    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => item(good).locator('.message').textContent()).toContain('Uploaded as imap/codice/l1b/2024/03/');
    expect(await item(good).getByRole('progressbar').evaluate((p) => (p as unknown as { value: number }).value)).toBe(1);
    expect(await page.locator('#coverage-table').textContent()).toContain('codice');

    await item(good).getByRole('link', { name: `Find ${good} by search` }).click();
    await expect.poll(() => firstCells(page)).toEqual([good]);
    expect(await rows(page).first().locator('td[data-label=Size]').textContent()).toBe('3.1 MB');

    // The same file again: the service's 409, and the same bytes in the archive: a harmless repeat.
    await page.getByLabel('Files to upload').setInputFiles([{ name: good, mimeType: 'application/octet-stream', buffer: bytes }]);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => item(good).locator('.message').textContent()).toBe(
      `Already in the archive with the same bytes (SHA-256 ${createHash('sha256').update(bytes).digest('hex')}); nothing sent. Find it`,
    );
    expect(await page.locator('#upload-summary').textContent()).toBe('0 uploaded, 1 already archived (same bytes).');
    await page.screenshot({ path: `${RESULTS_DIR}/portal-upload.png`, fullPage: true });
  });

  it('sends a large file in parts, with progress, and records the bytes stored', async () => {
    await page.goto(server.url);
    const name = 'imap_codice_l1b_large_20240322_20240322_v01-00.cdf';
    const dir = await mkdtemp(join(tmpdir(), 'sdc-portal-large-'));
    const file = join(dir, name);
    // 70 MiB: above the 64 MiB threshold, five 16 MiB parts; from disk (Playwright's buffers stop at 50 MB).
    const bytes = Buffer.alloc(70 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4096) bytes.writeUInt32BE(i, i);
    await writeFile(file, bytes);
    try {
      const seen: string[] = [];
      page.on('request', (r) => seen.push(`${r.method()} ${new URL(r.url()).pathname}${new URL(r.url()).searchParams.has('partNumber') ? ' part' : ''}`));
      await page.getByLabel('Files to upload').setInputFiles(file);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      const item = page.locator('#upload-list li', { hasText: name });
      await expect.poll(() => item.locator('.message').textContent(), { timeout: 60_000 }).toContain('Uploaded as imap/codice/l1b/2024/03/');
      expect(await item.getByRole('progressbar').evaluate((p) => (p as unknown as { value: number }).value)).toBe(1);
      expect(seen.filter((r) => r.endsWith(' part'))).toHaveLength(5);
      expect(seen).toContain(`POST /uploads/imap/codice/l1b/2024/03/${name}`);
      const [record] = (await (await fetch(`${server.url}/query?file_path=${name}`)).json()) as { sha256: string; size: number }[];
      expect(record).toMatchObject({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('shows the service\'s 400 as a readable message', async () => {
    await page.goto(`${server.url}/?start_date=2024&page=1`);
    await expect.poll(() => page.locator('#search-status').textContent()).toBe(
      'The search was refused: Invalid start_date "2024": expected a real date in YYYYMMDD format, e.g. 20240105.',
    );
    expect(await page.locator('#results').isHidden()).toBe(true);
  });

  it('works from the keyboard: type, submit with Enter, sort with Enter', async () => {
    await page.goto(server.url);
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to results');
    await page.getByLabel('Descriptor').focus();
    await page.keyboard.type('norm');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#search-status').textContent()).toContain('3 files match');
    await page.getByRole('button', { name: 'Size' }).focus();
    await page.keyboard.press('Enter');
    expect(new URL(page.url()).searchParams.get('sort')).toBe('size');
  });

  it('fits a narrow screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    await page.goto(`${server.url}/?instrument=mag&page=1`);
    await expect.poll(() => rows(page).count()).toBe(3);
    await page.locator('#coverage-figure').waitFor();
    expect(await page.locator('html').evaluate((html) => html.scrollWidth)).toBeLessThanOrEqual(360);
    await page.screenshot({ path: `${RESULTS_DIR}/portal-narrow.png`, fullPage: true });
  });

  it('runs the search an address describes: /?file_path=<name>, /?per_page=25', async () => {
    const name = magPath(day(6)).split('/').at(-1)!;
    await page.goto(`${server.url}/?file_path=${name}`);
    await expect.poll(() => firstCells(page)).toEqual([name]);
    expect(await page.getByLabel('File name or path').inputValue()).toBe(name);

    await page.goto(`${server.url}/?per_page=25`);
    await expect.poll(() => rows(page).count()).toBe(25);
    expect(await page.locator('#page-label').textContent()).toMatch(/^Page 1 of 2 /);
  });

  it('takes and shows dates as ISO YYYY-MM-DD, whatever the browser locale; Ingested on one line', async () => {
    await page.goto(`${server.url}/?instrument=mag&start_date=20240105&end_date=20240106&page=1`);
    await expect.poll(() => rows(page).count()).toBe(2);
    const from = page.getByLabel('Start date from');
    expect(await from.getAttribute('placeholder')).toBe('YYYY-MM-DD');
    expect(await from.inputValue()).toBe('2024-01-05');
    await from.fill('2024-01-06');
    await page.getByLabel('Start date to').fill('2024-01-07');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('start_date')).toBe('20240106');
    expect(new URL(page.url()).searchParams.get('end_date')).toBe('20240107');
    // The old answer also had two rows: wait for the new one (starting on the 6th) to be drawn.
    await expect.poll(async () => (await firstCells(page))[0]).toContain('_20240106_');
    await expect.poll(() => rows(page).count()).toBe(2);

    const ingested = rows(page).first().locator('td[data-label=Ingested]');
    expect(await ingested.textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}Z$/);
    const size = rows(page).first().locator('td[data-label=Size]');
    // Every column, the last (Uploader) included, fits a 1280-pixel window.
    const uploader = rows(page).first().locator('td[data-label=Uploader]');
    await uploader.waitFor();
    const last = (await uploader.boundingBox())!;
    expect(last.x + last.width).toBeLessThanOrEqual(1280);
    // One line: the cell is no taller than its neighbour's single line.
    expect((await ingested.boundingBox())!.height).toBeLessThanOrEqual((await size.boundingBox())!.height + 1);
  });

  it('styles the file input as a button of the page', async () => {
    await page.goto(server.url);
    const style = await page.locator('#upload-files').evaluate((input) => {
      // Runs in the page; the tests compile without the DOM library.
      const view = globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): Record<string, string> };
      const s = view.getComputedStyle(input, '::file-selector-button');
      return { border: s.borderTopColor, color: s.color, radius: s.borderTopLeftRadius };
    });
    expect(style).toEqual({ border: 'rgb(29, 95, 191)', color: 'rgb(29, 95, 191)', radius: '6px' });
  });

  it('coverage follows the search filters, and its hover text sits at the pointer', async () => {
    await page.goto(`${server.url}/?instrument=mag&page=1`);
    await expect.poll(() => page.locator('#coverage-status').textContent()).toContain('for the current search');
    expect(await page.locator('#coverage-table tbody tr').count()).toBe(1);
    expect(await page.locator('#coverage-table tbody td').first().textContent()).toBe('mag');

    // In the window first: the results and their actions above may push the plot below it.
    await page.locator('#coverage-plot').scrollIntoViewIfNeeded();
    const point = await pointOf(page, Date.UTC(2024, 0, 6, 12) / 1000, 0);
    await page.mouse.move(point.x, point.y);
    const hover = page.locator('#coverage-hover');
    await expect.poll(() => hover.isVisible()).toBe(true);
    expect(await hover.textContent()).toBe('mag l2: 2024-01-05 to 2024-01-07, 3 files, 225 B. Click to search.');
    const box = (await hover.boundingBox())!;
    expect(Math.abs(box.x - point.x)).toBeLessThan(40);
    expect(box.y - point.y).toBeGreaterThan(0);
    expect(box.y - point.y).toBeLessThan(40);
    await page.locator('#coverage').screenshot({ path: `${RESULTS_DIR}/portal-coverage-hover.png` });

    // Clearing the search shows the whole archive's coverage again.
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => page.locator('#coverage-table tbody tr').count()).toBeGreaterThan(1);
  });

  it('on a phone: the hint says tap, and the page fits the screen', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    await phone.goto(server.url);
    await phone.locator('#coverage-figure').waitFor();
    expect(await phone.locator('#coverage-how').textContent()).toBe('Tap a bar to search its files; the table below lists every span.');
    expect(await phone.locator('html').evaluate((html) => html.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.screenshot({ path: `${RESULTS_DIR}/portal-phone.png`, fullPage: true });
    await phone.close();
  });
});

describe.skipIf(!hasChromium)('portal in a browser, with more matches than a search loads', () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer();
    await server.ctx.catalog.insertMany([...syntheticRecords(IMAP_MISSION, MAX_LOADED + 2000)]);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('loads one bounded page of /query, says how many matched in all, and shows 50 rows at a time', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/?page=3`);
    await expect.poll(() => page.locator('#search-status').textContent(), { timeout: 20_000 }).toBe(
      `Showing the first ${MAX_LOADED.toLocaleString('en')} files (in path order) of ${(MAX_LOADED + 2000).toLocaleString('en')} matching files. ` +
        'Narrow the search to see and sort them all.',
    );
    expect(await rows(page).count()).toBe(50);
    expect(await page.locator('#page-label').textContent()).toBe(`Page 3 of ${MAX_LOADED / 50} (files 101–150)`);
    await expect.poll(() => page.locator('#coverage-table tbody tr').count()).toBe(IMAP_MISSION.instruments.length * IMAP_MISSION.dataLevels.length);
    await page.locator('#coverage').screenshot({ path: `${RESULTS_DIR}/portal-coverage-many.png` });
    await page.close();
  });
});

describe.skipIf(!hasChromium)('portal in a browser, on a service that wants API keys', () => {
  let server: TestServer;
  let browser: Browser;
  let key: string;
  beforeAll(async () => {
    server = await startTestServer({ requireKeys: 'true' });
    ({ key } = await server.ctx.catalog.keys().create('portal-user'));
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('retries a refused upload: 401 without a key, 403 with a wrong one, stored once the right key is typed', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const puts: string[] = [];
    page.on('request', (r) => r.method() === 'PUT' && puts.push(r.url()));
    await page.goto(server.url);
    const name = 'imap_swe_l1b_sci_20240301_20240301_v00-01.cdf';
    await page.getByLabel('Files to upload').setInputFiles([{ name, mimeType: 'application/octet-stream', buffer: Buffer.from('retry me\n') }]);
    const message = page.locator('#upload-list li', { hasText: name }).locator('.message');
    const upload = page.getByRole('button', { name: 'Upload', exact: true });

    await upload.click();
    await expect.poll(() => message.textContent()).toMatch(/^Not uploaded, not allowed: .*Press Upload to try again\.$/);
    await page.getByLabel(/API key/).fill('sdc_0000000000000000_wrongwrongwrongwrongwrongwrongwrongwrong123');
    await upload.click();
    await expect.poll(() => message.textContent()).toMatch(/^Not uploaded, not allowed: .*Press Upload to try again\.$/);
    expect(puts).toEqual([]);

    await page.getByLabel(/API key/).fill(key);
    await upload.click();
    await expect.poll(() => message.textContent()).toBe(`Uploaded as imap/swe/l1b/2024/03/${name}. Find it`);
    expect(puts).toHaveLength(1);
    const [record] = (await (await fetch(`${server.url}/query?file_path=${name}`)).json()) as { uploader: string }[];
    expect(record?.uploader).toBe('portal-user');

    // Stored: a further Upload sends nothing more.
    await upload.click();
    await page.waitForTimeout(300);
    expect(puts).toHaveLength(1);

    // The results table shows every field of the wire record, the uploader included.
    await page.getByRole('link', { name: `Find ${name} by search` }).click();
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().locator('td[data-label=Uploader]').textContent()).toBe('portal-user');
    await page.close();
  });
});

/** Page coordinates of time `t` (seconds) on row `row` of the coverage plot, from its scales. */
async function pointOf(page: Page, t: number, row: number): Promise<{ x: number; y: number }> {
  return page.locator('#coverage-plot').evaluate(
    (plot, [t, row]) => {
      const d = plot.dataset;
      const over = plot.querySelector('.u-over')!.getBoundingClientRect();
      const x = over.left + ((t - Number(d.xMin)) / (Number(d.xMax) - Number(d.xMin))) * over.width;
      const y = over.top + ((Number(d.yMax) - row) / (Number(d.yMax) - Number(d.yMin))) * over.height;
      return { x, y };
    },
    [t, row] as const,
  );
}

// Callbacks passed to evaluate() run in the page; the tests compile without the DOM library,
// so the little they use of a canvas is spelled out here.
interface CanvasLike {
  readonly width: number;
  readonly height: number;
  getBoundingClientRect(): { left: number; top: number; width: number; height: number };
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } | null;
}

/** The RGBA of the plot's canvas at page coordinates. */
async function pixel(page: Page, point: { x: number; y: number }): Promise<number[]> {
  return page.locator('#coverage-plot canvas').evaluate((canvas, { x, y }) => {
    const c = canvas as unknown as CanvasLike;
    const rect = c.getBoundingClientRect();
    const px = Math.round((x - rect.left) * (c.width / rect.width));
    const py = Math.round((y - rect.top) * (c.height / rect.height));
    return Array.from(c.getContext('2d')!.getImageData(px, py, 1, 1).data);
  }, point);
}
