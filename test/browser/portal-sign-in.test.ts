import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { freePort } from '../helpers/free-port.js';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { describeInBrowser, openPage, sidewaysOverflow, storedPathOf } from './portal-fixture.js';

/*
 * The portal's sign-in (docs/portal.md, "Signing in"): the authorization code flow with PKCE in
 * headless Chromium against a real OpenID provider (oidc-provider on loopback). The mission keeps
 * l1a for the team, so a team-only file shows once the tab is signed in as a reader and goes
 * once it signs out.
 */
const PUBLIC = 'imap_swe_l2_sci_20240105_20240105_v00-01.cdf';
const TEAM = 'imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
const fileRows = '#results tbody tr:not(.withdrawn-note)';
/** Where the page keeps the tab's tokens (web/src/sign-in-session.ts). */
const TOKENS_KEY = 'sdc.sign-in';

/** Fills the provider's own pages (oidc-provider's sign-in form, and its consent page if it shows one) as `user`. */
async function signInAtProvider(page: Page, provider: TestProvider, user: string): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(provider.issuer), { timeout: 10_000 });
  await page.locator('input[name="login"]').fill(user);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.waitForURL((url) => !url.href.startsWith(provider.issuer) || url.pathname.includes('/interaction/'), { timeout: 10_000 });
  if (page.url().startsWith(provider.issuer)) await page.locator('button[type="submit"]').click();
}

describeInBrowser('portal: signing in with the archive\'s provider', (viewport, browser) => {
  let provider: TestProvider;
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    // The provider must know the portal's redirect URI before the server that names it starts.
    const port = await freePort();
    provider = await startTestProvider([`http://127.0.0.1:${port}/auth/callback`]);
    dir = await mkdtemp(join(tmpdir(), 'sdc-sign-in-'));
    const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }] } };
    await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
    server = await startTestServer({ port: String(port), missionConfig: join(dir, 'mission.json') }, provider.env);
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    for (const name of [PUBLIC, TEAM]) {
      const res = await fetch(`${server.url}/upload/${storedPathOf(name)}`, { headers: { 'X-API-Key': key } });
      expect(res.status).toBe(200);
      expect((await fetch((await res.json()) as string, { method: 'PUT', body: `bytes of ${name}`, headers: { 'Content-Type': '' } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('signs in with code + PKCE, shows the name and role and the team-only file (and downloads it), keeps them over a reload, renews the token, and hides the file again on sign-out', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    const names = () => page.locator(`${fileRows} th`).allTextContents();
    await page.goto(`${server.url}/?instrument=swe`);
    await expect.poll(names, { timeout: 10_000 }).toEqual([expect.stringContaining(PUBLIC)]);
    await expect.poll(() => page.getByRole('button', { name: 'Sign in', exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(false);

    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signInAtProvider(page, provider, 'rita');
    // Back on the search that was left, with no code or state in the address.
    await page.waitForURL((url) => url.href === `${server.url}/?instrument=swe`, { timeout: 10_000 });
    await expect.poll(() => page.locator('#sign-in-status').textContent(), { timeout: 10_000 }).toBe('Signed in as rita (reader)');
    await expect.poll(names, { timeout: 10_000 }).toEqual([expect.stringContaining(TEAM), expect.stringContaining(PUBLIC)]);
    expect(await sidewaysOverflow(page)).toBe(0);
    await page.screenshot({ path: `test-results/portal-signed-in-${viewport.name}.png`, fullPage: false });

    // The team-only file downloads: its link goes through /download with the token.
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10_000 }), page.getByRole('link', { name: TEAM }).click()]);
    expect(download.suggestedFilename()).toBe(TEAM);
    expect(await readFile((await download.path())!, 'utf8')).toBe(`bytes of ${TEAM}`);

    // The tokens are this tab's (sessionStorage): a reload keeps the sign-in.
    await page.reload();
    await expect.poll(() => page.locator('#sign-in-status').textContent(), { timeout: 10_000 }).toBe('Signed in as rita (reader)');
    await expect.poll(names, { timeout: 10_000 }).toEqual([expect.stringContaining(TEAM), expect.stringContaining(PUBLIC)]);

    // A token about to end is renewed with the refresh token before the next request needs it.
    const stored = () => page.evaluate<{ accessToken: string; refreshToken?: string; expiresAt: number }>(`JSON.parse(sessionStorage.getItem('${TOKENS_KEY}'))`);
    const first = await stored();
    expect(first.refreshToken).toBeTruthy();
    await page.evaluate(`sessionStorage.setItem('${TOKENS_KEY}', JSON.stringify({ ...JSON.parse(sessionStorage.getItem('${TOKENS_KEY}')), expiresAt: Math.floor(Date.now() / 1000) + 5 }))`);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(async () => (await stored()).accessToken, { timeout: 10_000 }).not.toBe(first.accessToken);
    expect((await stored()).expiresAt).toBeGreaterThan(Date.now() / 1000 + 60);
    await expect.poll(names, { timeout: 10_000 }).toEqual([expect.stringContaining(TEAM), expect.stringContaining(PUBLIC)]);

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.locator('#sign-in-status').textContent(), { timeout: 10_000 }).toBe('Signed out.');
    await expect.poll(names, { timeout: 10_000 }).toEqual([expect.stringContaining(PUBLIC)]);
    await expect.poll(() => page.getByRole('button', { name: 'Sign in', exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('says so when the person cancels at the provider, back on the same search and still signed out', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(`${server.url}/?instrument=swe`);
    await expect.poll(() => page.getByRole('button', { name: 'Sign in', exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer), { timeout: 10_000 });
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await page.waitForURL((url) => url.href === `${server.url}/?instrument=swe`, { timeout: 10_000 });
    await expect.poll(() => page.locator('#sign-in-status').textContent(), { timeout: 10_000 }).toMatch(/^The sign-in provider refused the sign-in: access_denied.* Press Sign in to try again\.$/);
    // The button comes back once the portal has asked the server how to sign in (a request of its own, late on a loaded machine).
    await expect.poll(() => page.getByRole('button', { name: 'Sign in', exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => page.locator(`${fileRows} th`).allTextContents(), { timeout: 10_000 }).toEqual([expect.stringContaining(PUBLIC)]);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('uploads as the signed-in uploader, with no key: refused before signing in, recorded as oidc:<name> after', async () => {
    const { page, close } = await openPage(browser(), viewport);
    const name = 'imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
    const pick = () => page.getByLabel('Files to upload').setInputFiles([{ name, mimeType: 'application/octet-stream', buffer: Buffer.from(`bytes of ${name}`) }]);
    const summary = page.locator('#upload-summary');
    await page.goto(`${server.url}/`);
    await pick();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => summary.textContent(), { timeout: 10_000 }).toBe('0 uploaded, 1 failed (SDC_API_KEY_MISSING).');

    await expect.poll(() => page.getByRole('button', { name: 'Sign in', exact: true }).isVisible(), { timeout: 10_000 }).toBe(true);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await signInAtProvider(page, provider, 'ursula');
    await expect.poll(() => page.locator('#sign-in-status').textContent(), { timeout: 10_000 }).toBe('Signed in as ursula (uploader)');
    await pick();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => summary.textContent(), { timeout: 10_000 }).toMatch(/^1 uploaded\b/);
    const [record] = (await (await fetch(`${server.url}/query?file_path=${name}`)).json()) as { uploader: string }[];
    expect(record!.uploader).toBe('oidc:ursula');
    await close();
  });
});
