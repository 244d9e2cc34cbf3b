import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Files run in parallel workers; each test starts its own server on port 0 and its own SDC_HOME.
    pool: 'forks',
  },
});
