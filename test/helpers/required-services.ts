import { spawnSync } from 'node:child_process';
import { HAVE_ARIA2, NO_ARIA2 } from './aria2.js';
import { hasChromium, NO_CHROMIUM_MESSAGE } from './browser.js';
import { HAVE_NGINX, NGINX_SKIPPED } from './nginx.js';
import { whyNoPodman } from './podman.js';
import { HAVE_PROMTOOL, NO_PROMTOOL } from './promtool.js';
import { HAVE_RGW, NO_RGW } from './rgw.js';

/**
 * vitest globalSetup after local-services.ts: with SDC_TEST_REQUIRE_ALL=1 (as .ci/run sets for
 * `npm run test:all`) a tool a test group needs is required, not skipped; the run stops before any
 * test with one line per missing tool. Elsewhere those groups skip and say so.
 */
export default async function setup(): Promise<void> {
  if (process.env.SDC_TEST_REQUIRE_ALL !== '1') return;
  const missing: string[] = [];
  if (!process.env.TEST_DATABASE_URL) missing.push('PostgreSQL: no TEST_DATABASE_URL and nothing answers at 127.0.0.1:5432');
  if (!HAVE_RGW) missing.push(NO_RGW);
  if (!hasChromium) missing.push(NO_CHROMIUM_MESSAGE);
  if (!HAVE_NGINX) missing.push(NGINX_SKIPPED);
  if (!HAVE_ARIA2) missing.push(NO_ARIA2);
  if (!HAVE_PROMTOOL) missing.push(NO_PROMTOOL);
  const podman = await whyNoPodman();
  if (podman) missing.push(`container tests: ${podman}`);
  if (spawnSync('python3', ['--version']).status !== 0) missing.push('python3 is not on the PATH');
  if (missing.length > 0) {
    throw new Error(`SDC_TEST_REQUIRE_ALL=1: every test group must run, but:\n${missing.map((line) => `  - ${line}`).join('\n')}`);
  }
}
