import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The portal's assets (web/dist), which the server serves at /; and dist, for the tests
    // that run the real `sdc` command as a child process.
    // local-services finds PostgreSQL at 127.0.0.1:5432 when TEST_DATABASE_URL is unset, and names
    // each test group it cannot run at the end of the run.
    globalSetup: ['test/helpers/local-services.ts', 'test/helpers/build-portal.ts', 'test/helpers/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Files run in parallel workers; each test starts its own server on port 0 and its own SDC_HOME.
    pool: 'forks',
  },
});
