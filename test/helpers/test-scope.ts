/**
 * Which run this is: `npm test` (the fast loop, vitest.fast.config.ts sets SDC_TEST_SCOPE=fast)
 * or `npm run test:all` / `npx vitest run <file>` (everything). In the fast loop the helpers
 * report PostgreSQL, S3 (radosgw) and nginx as absent, so the tests that need them skip and say
 * where they run (test/README.md).
 */
export const FAST_LOOP = process.env.SDC_TEST_SCOPE === 'fast';

/** What a test skipped by the fast loop says. */
export const IN_TEST_ALL = 'skipped by npm test: runs in npm run test:all';
