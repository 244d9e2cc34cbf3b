import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: builds the portal's assets from web/ before any test runs, so the
 * server under test serves the current sources (the build takes well under a second).
 */
export function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../web/build.js', import.meta.url))], { stdio: 'pipe' });
}
