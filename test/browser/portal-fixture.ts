import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { hasChromium, launchBrowser, NO_CHROMIUM_MESSAGE } from '../helpers/browser.js';
import { ensurePortal } from '../helpers/lazy-build.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

// Every browser test imports this fixture: the portal's assets as the sources are now
// (web/build.js runs only when web/ or src/ changed).
await ensurePortal();

/** The two sizes the portal is tested at: a phone (touch) and a laptop. */
export const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844, touch: true },
  { name: 'desktop', width: 1366, height: 800, touch: false },
] as const;
export type Viewport = (typeof VIEWPORTS)[number];

/** A descriptor as long as instrument teams make them: a name with few break opportunities. */
export const LONG_DESCRIPTOR = 'burst-mode-high-resolution-calibrated-electron-counts';

export const storedPathOf = (name: string) => {
  const [, instrument, level, , start] = name.split('_') as [string, string, string, string, string];
  return `imap/${instrument}/${level}/${start.slice(0, 4)}/${start.slice(4, 6)}/${name}`;
};

export interface OpenPage {
  readonly page: Page;
  /** Script errors and console errors other than the service's own 4xx/5xx answers, which tests provoke. */
  readonly problems: string[];
  /** Closes the page and its browser context. */
  close(): Promise<void>;
}

/** A fresh page at `viewport`; a phone gets touch and a mobile viewport as a real one has. */
export async function openPage(browser: Browser, viewport: Viewport, permissions: string[] = []): Promise<OpenPage> {
  const context = await browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    hasTouch: viewport.touch,
    isMobile: viewport.touch,
    permissions,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/^Failed to load resource/.test(msg.text())) problems.push(msg.text());
  });
  return { page, problems, close: () => context.close() };
}

/** How far the document reaches past the window sideways (0: nothing overflows). */
export function sidewaysOverflow(page: Page): Promise<number> {
  // A string: it runs in the page, and the tests compile without the DOM library.
  return page.evaluate<number>('document.documentElement.scrollWidth - innerWidth');
}

/**
 * A describe block whose tests run at each of VIEWPORTS in one Chromium, launched before them and
 * closed after (skipped, saying what to install, where there is none). `body` declares one
 * viewport's tests; `browser()` is the launched browser once the hooks have run.
 */
export function describeInBrowser(title: string, body: (viewport: Viewport, browser: () => Browser) => void): void {
  if (!hasChromium) console.warn(NO_CHROMIUM_MESSAGE);
  describe.skipIf(!hasChromium)(title, () => {
    let browser: Browser | undefined;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });
    describe.each(VIEWPORTS)('at $width x $height ($name)', (viewport) => body(viewport, () => browser!));
  });
}

/**
 * For one describe block: a server (started with `settings`) holding `files` (name -> bytes,
 * uploaded under their stored paths) before the block's tests, stopped after them.
 */
export function seededServer(files: Readonly<Record<string, string>>, settings: Parameters<typeof startTestServer>[0] = {}): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer(settings);
    for (const [name, bytes] of Object.entries(files)) expect((await uploadFile(server.url, storedPathOf(name), bytes)).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}
