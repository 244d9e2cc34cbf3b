import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchBrowser, NO_CHROMIUM_MESSAGE } from '../helpers/browser.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';
import { openPage, storedPathOf, VIEWPORTS } from './portal-fixture.js';

if (!hasChromium) console.warn(NO_CHROMIUM_MESSAGE);

const magName = (day: string, version = 'v01-00') => `imap_mag_l2_norm_202401${day}_202401${day}_${version}.cdf`;
/** mag l2 on Jan 5-7, Jan 6 in two versions; one swe file. */
const SEEDS = [magName('05'), magName('06'), magName('06', 'v01-01'), magName('07'), 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf'];
const bytesOf = (name: string) => `bytes of ${name}\n`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The words of a command line as a POSIX shell splits them (plain words and '…' quoting, which is all the page writes). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));
}

describe.skipIf(!hasChromium)('portal: SHA-256, metalink and the sdc command', () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    server = await startTestServer();
    for (const name of SEEDS) expect((await uploadFile(server.url, storedPathOf(name), bytesOf(name))).status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  describe.each(VIEWPORTS)('at $width x $height ($name)', (viewport) => {
    it('shows each result\'s whole SHA-256 and copies it with the Clipboard API', async () => {
      const { page, problems, close } = await openPage(browser, viewport, ['clipboard-read', 'clipboard-write']);
      await page.goto(`${server.url}/?instrument=mag&page=1`);
      const rows = page.locator('#results tbody tr');
      await expect.poll(() => rows.count()).toBe(4);
      for (const [i, name] of [magName('05'), magName('06'), magName('06', 'v01-01'), magName('07')].entries()) {
        const digest = rows.nth(i).locator('td[data-label="SHA-256"] code');
        expect(await digest.textContent()).toBe(sha256(bytesOf(name)));
        expect(await digest.isVisible()).toBe(true);
      }
      // By its name first (what a screen reader says), then by place: the name changes to "Copied…".
      await rows.nth(1).getByRole('button', { name: `Copy SHA-256 of ${magName('06')}` }).click();
      const copy = rows.nth(1).locator('button.copy');
      await expect.poll(() => copy.textContent()).toContain('Copied');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(sha256(bytesOf(magName('06'))));
      expect(await page.locator('#copy-status').textContent()).toBe(`Copied the SHA-256 of ${magName('06')} to the clipboard.`);
      await close();
      expect(problems).toEqual([]);
    });

    it('copies without the Clipboard API too (plain http on a host name has none)', async () => {
      const reader = await openPage(browser, viewport, ['clipboard-read', 'clipboard-write']);
      const { page, problems, close } = await openPage(browser, viewport);
      await page.context().addInitScript('Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined })');
      await page.goto(`${server.url}/?instrument=swe&page=1`);
      expect(await page.evaluate('navigator.clipboard === undefined')).toBe(true);
      await reader.page.goto(server.url);
      await reader.page.evaluate('navigator.clipboard.writeText("before")');
      await page.getByRole('button', { name: /^Copy SHA-256 of / }).click();
      const copy = page.locator('#results button.copy');
      await expect.poll(() => copy.textContent()).toContain('Copied');
      // The browser's clipboard, read from another page that may use the API.
      expect(await reader.page.evaluate('navigator.clipboard.readText()')).toBe(sha256(bytesOf(SEEDS[4]!)));
      await close();
      await reader.close();
      expect(problems).toEqual([]);
    });

    it('links the search as a Metalink and gives the sdc download command that fetches the same files', async () => {
      const { page, problems, close } = await openPage(browser, viewport, ['clipboard-read', 'clipboard-write']);
      await page.goto(`${server.url}/?instrument=mag&start_date=20240105&end_date=20240106&version=latest&page=1`);
      await expect.poll(() => page.locator('#results tbody tr').count()).toBe(2);
      const link = page.getByRole('link', { name: 'Download these 2 files' });
      expect(await link.getAttribute('href')).toBe('/query?instrument=mag&start_date=20240105&end_date=20240106&version=latest&format=metalink');

      await page.getByRole('button', { name: 'Copy as an sdc download command' }).click();
      const command = (await page.evaluate('navigator.clipboard.readText()')) as string;
      expect(command).toBe(`sdc download --query --instrument mag --start-date 20240105 --end-date 20240106 --latest --url ${server.url}`);
      expect(await page.locator('#sdc-command').textContent()).toBe(command);

      // The command as a user runs it: it downloads exactly the files the page lists.
      const dir = await mkdtemp(join(tmpdir(), 'sdc-portal-command-'));
      try {
        const [program, ...args] = shellWords(command);
        expect(program).toBe('sdc');
        const run = await runCli([...args, '--quiet'], { cwd: dir });
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const folder = join(dir, 'imap/mag/l2/2024/01');
        expect((await readdir(folder)).sort()).toEqual([magName('05'), magName('06', 'v01-01')]);
        expect(await readFile(join(folder, magName('05')), 'utf8')).toBe(bytesOf(magName('05')));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      await close();
      expect(problems).toEqual([]);
    }, 60_000);
  });

  it('writes every filter as the flag sdc takes, quoted for a shell where needed', async () => {
    const { page, problems, close } = await openPage(browser, VIEWPORTS[1]);
    const query = 'file_path=imap_mag_l2_norm_20240105_20240105_v01-00.cdf&descriptor=norm&version=*&extension=cdf&ingestion_start_date=20240101&ingestion_end_date=20991231&overlap=true&data_level=l2';
    await page.goto(`${server.url}/?${query}&page=1`);
    await expect.poll(() => page.locator('#results tbody tr').count()).toBe(1);
    expect(await page.locator('#sdc-command').textContent()).toBe(
      "sdc download --query --file-path imap_mag_l2_norm_20240105_20240105_v01-00.cdf --descriptor norm --version '*' --extension cdf " +
        `--since 20240101 --until 20991231 --overlap --data-level l2 --url ${server.url}`,
    );
    await close();
    expect(problems).toEqual([]);
  });
});
