import { ensureCliBuild } from './lazy-build.js';

/**
 * vitest globalSetup of both runs: transpiles src once before any test, so each `sdc` a test
 * starts (run-cli.ts) runs plain JavaScript rather than through tsx's loader (test/README.md, "How long").
 */
export default async function setup(): Promise<void> {
  await ensureCliBuild();
}
