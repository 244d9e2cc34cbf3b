import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { RESULTS_DIR } from '../helpers/browser.js';
import { describeInBrowser, openPage, seededServer, storedPathOf } from './portal-fixture.js';

const name = (descriptor: string) => `imap_swe_l1b_${descriptor}_20240401_20240401_v00-01.cdf`;
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
/** The server takes objects up to this size (SDC_MAX_OBJECT_SIZE): a larger file fails with its code. */
const LIMIT = 1000;

describeInBrowser('portal upload summary', (viewport, browser) => {
  // Archived before: one with the bytes the page will send again, one with other bytes.
  const server = seededServer({ [name('same')]: 'same bytes\n', [name('changed')]: 'first bytes\n' }, { maxObjectSize: String(LIMIT) });

  it('counts a batch in one line: uploaded, already archived, conflict, failed with its code, not sent', async () => {
    const { page, problems, close } = await openPage(browser(), viewport);
    await page.goto(server().url);
    const file = (n: string, bytes: string | Buffer) => ({ name: n, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
    const large = Buffer.alloc(LIMIT + 1000, 1);
    await page.getByLabel('Files to upload').setInputFiles([
      file(name('new-one'), 'one\n'),
      file(name('new-two'), 'two\n'),
      file(name('same'), 'same bytes\n'),
      file(name('changed'), 'second bytes\n'),
      file(name('large'), large),
      file('imap_swe_l9_sci_20240401_20240401_v00-01.cdf', 'x'),
    ]);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const summary = page.locator('#upload-summary');
    await expect.poll(() => summary.textContent(), { timeout: 10_000 }).toBe(
      '2 uploaded, 1 already archived (same bytes), 1 conflict (different bytes under an archived name), ' +
        '1 failed (SDC_OBJECT_TOO_LARGE), 1 not sent (name not valid).',
    );
    const message = (descriptor: string) => page.locator('#upload-list li', { hasText: name(descriptor) }).locator('.message');
    expect(await message('new-one').textContent()).toBe(`Uploaded as ${storedPathOf(name('new-one'))}. Find it`);
    expect(await message('same').textContent()).toBe(`Already in the archive with the same bytes (SHA-256 ${sha256('same bytes\n')}); nothing sent. Find it`);
    expect(await message('changed').textContent()).toBe(
      `Not uploaded, the archive holds different bytes under this name: ${storedPathOf(name('changed'))} already exists. ` +
        `Archived SHA-256 ${sha256('first bytes\n')}, this file's ${sha256('second bytes\n')}. ` +
        'A changed file needs a new version in its name. (SDC_ALREADY_EXISTS)',
    );
    expect(await message('large').textContent()).toMatch(/^Not uploaded \(413\): .*\(SDC_OBJECT_TOO_LARGE\) Press Upload to try again\.$/);
    await page.locator('#upload').screenshot({ path: `${RESULTS_DIR}/portal-upload-summary-${viewport.name}.png` });

    // A second Upload sends only what is still to send: the stored and archived files stay done.
    const puts: string[] = [];
    page.on('request', (r) => r.method() === 'PUT' && puts.push(new URL(r.url()).pathname));
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => summary.textContent()).toMatch(/^2 uploaded, 1 already archived/);
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatch(new RegExp(`/${name('large')}$`));
    await close();
    expect(problems).toEqual([]);
  });
});
