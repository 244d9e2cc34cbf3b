import { expect, it } from 'vitest';
import { RESULTS_DIR } from '../helpers/browser.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';
import { describeInBrowser, openPage, storedPathOf } from './portal-fixture.js';

if (!TEST_DATABASE_URL) console.warn(`portal outage (503) tests: ${NO_DATABASE}`);

const NAME = 'imap_mag_l2_norm_20240105_20240105_v01-00.cdf';

describeInBrowser('portal when the service cannot be reached', (viewport, browser) => {
  // Two servers started and a page driven through an outage: minutes of work on a loaded machine (30 s was too few in CI).
  it('says so in plain words when nothing answers, and Try again works once the service is back', { timeout: 120_000 }, async () => {
    let server: TestServer = await startTestServer();
    const { home } = server;
    const port = new URL(server.url).port;
    const { page, problems, close } = await openPage(browser(), viewport);
    try {
      expect((await uploadFile(server.url, storedPathOf(NAME), 'mag\n')).status).toBe(200);
      await page.goto(`${server.url}/?instrument=mag&page=1`);
      await expect.poll(() => page.locator('#results tbody tr').count()).toBe(1);

      // The service stops (the page stays): a search, the coverage and an upload meet no answer.
      await server.close();
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const status = page.locator('#search-status');
      await expect.poll(() => status.textContent()).toBe('The archive cannot be reached right now; try again in 10 s.');
      expect(await page.locator('#search-retry').isVisible()).toBe(true);
      expect(await page.locator('#results').isHidden()).toBe(true);
      await expect.poll(() => page.locator('#coverage-status').textContent()).toBe(
        'Coverage could not be loaded. The archive cannot be reached right now; try again in 10 s.',
      );
      const other = 'imap_mag_l2_norm_20240106_20240106_v01-00.cdf';
      await page.getByLabel('Files to upload').setInputFiles([{ name: other, mimeType: 'application/octet-stream', buffer: Buffer.from('x') }]);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await expect.poll(() => page.locator('#upload-summary').textContent()).toBe('0 uploaded, 1 failed (no answer).');
      expect(await page.locator('#upload-list .message').textContent()).toBe(
        'Not uploaded. The archive cannot be reached right now; try again in 10 s. Press Upload to try again.',
      );
      await page.screenshot({ path: `${RESULTS_DIR}/portal-unreachable-${viewport.name}.png`, fullPage: true });

      // Back on the same address: Try again runs the search.
      server = await startTestServer({ home, port });
      await page.locator('#search-retry').click();
      await expect.poll(() => status.textContent()).toMatch(/^1 file match/);
      expect(await page.locator('#results').isVisible()).toBe(true);
      expect(await page.locator('#search-retry').isHidden()).toBe(true);
      await page.locator('#coverage-retry').click();
      await expect.poll(() => page.locator('#coverage-status').textContent()).toMatch(/^1 file of 1 product/);
    } finally {
      await close();
      await server.stop();
    }
    expect(problems).toEqual([]);
  });

  it.skipIf(!TEST_DATABASE_URL)('uses the Retry-After of a 503 (its catalog down), and recovers', async () => {
    const schema: TestSchema = testSchema();
    const database = new URL(schema.url);
    const proxy = new TcpProxy(database.hostname, Number(database.port || 5432));
    await proxy.start();
    database.host = proxy.url;
    const server = await startTestServer({ catalog: database.toString() });
    const { page, problems, close } = await openPage(browser(), viewport);
    try {
      expect((await uploadFile(server.url, storedPathOf(NAME), 'mag\n')).status).toBe(200);
      await page.goto(`${server.url}/?instrument=mag&page=1`);
      await expect.poll(() => page.locator('#results tbody tr').count()).toBe(1);

      await proxy.refuse();
      const direct = await fetch(`${server.url}/query?instrument=mag`);
      expect([direct.status, direct.headers.get('retry-after'), direct.headers.get('x-error-code')]).toEqual([503, '5', 'SDC_CATALOG_UNAVAILABLE']);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await expect.poll(() => page.locator('#search-status').textContent()).toBe('The archive cannot be reached right now; try again in 5 s.');

      await proxy.resume();
      await page.locator('#search-retry').click();
      await expect.poll(() => page.locator('#search-status').textContent()).toMatch(/^1 file match/);
    } finally {
      await close();
      await server.stop();
      await proxy.stop();
      await schema.drop();
    }
    expect(problems).toEqual([]);
  });
});
