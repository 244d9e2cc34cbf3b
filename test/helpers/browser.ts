import { existsSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); CI installs it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const NO_CHROMIUM_MESSAGE = `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`;

/** Where screenshots go (a CI artifact; gitignored). */
export const RESULTS_DIR = 'test-results';

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
