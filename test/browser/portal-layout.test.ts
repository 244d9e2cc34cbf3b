import { expect, it } from 'vitest';
import { RESULTS_DIR } from '../helpers/browser.js';
import { describeInBrowser, LONG_DESCRIPTOR, openPage, seededServer, sidewaysOverflow } from './portal-fixture.js';

const longName = (date: string) => `imap_swe_l1a_${LONG_DESCRIPTOR}_${date}_${date}_v00-01.cdf`;
/** Long names on days spread over two months, and a second product: several axis labels, several table rows. */
const SEEDS = [
  ...['20240101', '20240105', '20240110', '20240201', '20240216'].map(longName),
  'imap_mag_l2_norm_20240103_20240104_v01-00.cdf',
];

interface Label {
  readonly text: string;
  readonly left: number;
  readonly right: number;
}

describeInBrowser('portal layout with long names', (viewport, browser) => {
  // A server each: the upload test adds files.
  const server = seededServer(Object.fromEntries(SEEDS.map((name) => [name, `bytes of ${name}\n`])));

  it('wraps long names in the results: nothing overflows sideways', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?instrument=swe&page=1`);
    await expect.poll(() => page.locator('#results tbody tr').count(), { timeout: 10_000 }).toBe(5);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    // The table needs no scrolling of its own either: every column is in view.
    const table = await page.locator('#results').evaluate((t) => [t.scrollWidth, t.parentElement!.clientWidth]);
    expect(table[0]).toBeLessThanOrEqual(table[1]!);
    // The whole long name is there, wrapped, not cut.
    expect(await page.locator('#results tbody th').first().textContent()).toBe(longName('20240101'));
    await page.screenshot({ path: `${RESULTS_DIR}/portal-results-${viewport.name}.png`, fullPage: true });
    await close();
    expect(problems).toEqual([]);
  });

  it('labels the coverage axis several times without overlap, and lists spans in a table that fits', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(server().url);
    await page.locator('#coverage-figure').waitFor();
    const plot = page.locator('#coverage-plot');
    await expect.poll(() => plot.getAttribute('data-x-labels')).not.toBeNull();
    const labels = JSON.parse((await plot.getAttribute('data-x-labels'))!) as Label[];
    const width = await plot.evaluate((p) => p.clientWidth);
    expect(labels.length).toBeGreaterThanOrEqual(3);
    for (const [i, label] of labels.entries()) {
      expect(label.left).toBeGreaterThanOrEqual(0);
      expect(label.right).toBeLessThanOrEqual(width);
      // A few pixels of space between neighbours.
      if (i > 0) expect(label.left - labels[i - 1]!.right).toBeGreaterThanOrEqual(4);
    }
    // ISO days (or months, years), the first naming its year.
    expect(labels[0]!.text).toMatch(/^(\d{4}-\d{2}-\d{2}|\d{2}-\d{2}\n\d{4}|\d{4}-\d{2}|\d{4})$/);

    await page.locator('#coverage-details summary').click();
    const rows = page.locator('#coverage-table tbody tr');
    await expect.poll(() => rows.count()).toBe(6);
    const table = await page.locator('#coverage-table').evaluate((t) => [t.scrollWidth, t.parentElement!.clientWidth]);
    expect(table[0]).toBeLessThanOrEqual(table[1]!);
    // Every value of a row and its Search button are on the screen.
    for (const cell of await rows.first().locator('td').all()) {
      const box = (await cell.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    }
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    await page.locator('#coverage').screenshot({ path: `${RESULTS_DIR}/portal-coverage-${viewport.name}.png` });
    await close();
    expect(problems).toEqual([]);
  });

  it('shows a whole page (the screenshots of docs/portal.md)', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server().url}/?instrument=swe&start_date=20240101&end_date=20240105&page=1`);
    await expect.poll(() => page.locator('#search-status').textContent()).toMatch(/^2 files match/);
    await page.locator('#coverage-figure').waitFor();
    await page.locator('#coverage-details summary').click();
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${RESULTS_DIR}/portal-page-${viewport.name}.png`, fullPage: true });
    await close();
    expect(problems).toEqual([]);
  });

  it('lists long upload names and messages wrapped, and the Upload button can be pressed', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(server().url);
    const fresh = longName('20240301');
    const invalid = `imap_swe_l9_${LONG_DESCRIPTOR}_20240301_20240301_v00-01.cdf`;
    await page.getByLabel('Files to upload').setInputFiles([
      { name: fresh, mimeType: 'application/octet-stream', buffer: Buffer.from(`${viewport.name} bytes\n`) },
      { name: invalid, mimeType: 'application/octet-stream', buffer: Buffer.from('x') },
      // Archived already, with other bytes: the longest message the list shows (two digests).
      { name: longName('20240101'), mimeType: 'application/octet-stream', buffer: Buffer.from('other bytes\n') },
    ]);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    // A click lands only on a button nothing covers (Playwright checks what is under the pointer).
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => page.locator('#upload-summary').textContent()).toMatch(/^1 uploaded, /);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    await page.locator('#upload').screenshot({ path: `${RESULTS_DIR}/portal-upload-${viewport.name}.png` });
    await close();
    expect(problems).toEqual([]);
  });
});
