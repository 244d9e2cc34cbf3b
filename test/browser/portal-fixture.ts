import type { Browser, Page } from 'playwright-core';
import { ensurePortal } from '../helpers/lazy-build.js';

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
