import { configDefaults, defineConfig } from 'vitest/config';
import { testOptions } from './vitest.config.js';

/**
 * `npm test`: the fast loop, unit + contract + e2e on the embedded default (SQLite and the local
 * store). Left to `npm run test:all` (test/README.md): the folders below; the tests that need
 * PostgreSQL, radosgw or nginx (their helpers report them absent, test/helpers/test-scope.ts);
 * the tests tagged `slow` (skipped here).
 */
export const SLOW_FOLDERS = ['test/browser/**', 'test/deploy/**', 'test/faults/**', 'test/reliability/**'];

export default defineConfig({
  test: {
    ...testOptions(true),
    exclude: [...configDefaults.exclude, ...SLOW_FOLDERS],
    env: { SDC_TEST_SCOPE: 'fast' },
    globalSetup: ['test/helpers/fast-loop.ts'],
  },
});
