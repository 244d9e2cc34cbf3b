import { configDefaults, defineConfig } from 'vitest/config';
import { testOptions, testProjects } from './vitest.config.js';
import { SLOW_FOLDERS } from './test/helpers/slow-first-sequencer.js';

/**
 * `npm test`: the fast loop, unit + contract + e2e on the embedded default (SQLite and the local
 * store). Left to `npm run test:all` (test/README.md): SLOW_FOLDERS (test/helpers/slow-first-sequencer.ts);
 * the tests that need PostgreSQL, radosgw or nginx (their helpers report them absent,
 * test/helpers/test-scope.ts); the tests tagged `slow` (skipped here).
 */
const options = {
  ...testOptions(true),
  exclude: [...configDefaults.exclude, ...SLOW_FOLDERS.map((folder) => `${folder}**`)],
  env: { SDC_TEST_SCOPE: 'fast' },
};

export default defineConfig({
  test: {
    ...options,
    projects: testProjects(options),
    globalSetup: ['test/helpers/fast-loop.ts', 'test/helpers/cli-build.ts'],
  },
});
