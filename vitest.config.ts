import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration, type ViteUserConfig } from 'vitest/config';
import SlowFirstSequencer, { SLOW_FOLDERS } from './test/helpers/slow-first-sequencer.js';

type TestOptions = NonNullable<ViteUserConfig['test']>;

/**
 * `npm run test:all` and `npx vitest run <file>`: every test. `npm test` is the fast loop
 * (vitest.fast.config.ts). Where a new test goes: test/README.md.
 */
export function testOptions(fastLoop: boolean): TestOptions {
  return {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Hooks start Ceph clusters (startRgw: 1-2 s idle, tens of seconds on 2 loaded cores), nginx and
    // servers: bounded, but never by the 30 s a test gets. A hook that needs longer passes its own.
    hookTimeout: 120_000,
    // expect.poll waits for what a loaded machine does later (a page's first search, a sweep):
    // vitest's default 1 s failed tests in CI that passed alone; 10 s bounds a real failure still.
    expect: { poll: { timeout: 10_000 } },
    // Files run in parallel workers; each test starts its own server on port 0 and its own SDC_HOME.
    pool: 'forks',
    // vitest's default (cores - 1) is one worker on 2 cores: every file in turn, while most of them
    // wait on a child process, a Ceph cluster, podman or the network. One more worker than cores
    // keeps both cores busy (test/README.md, "How long"); `--maxWorkers=N` overrides it.
    maxWorkers: availableParallelism() + 1,
    // The slow groups first, beside the rest rather than after it.
    sequence: { sequencer: SlowFirstSequencer },
    // A slow test in a fast folder: `{ tags: ['slow'] }` on its it() or describe() (test/README.md).
    // Its own bound, 5 min (a test's or block's own timeout wins); skipped by the fast loop.
    tags: [
      {
        name: 'slow',
        description: 'moves hundreds of megabytes or takes minutes on a loaded machine: npm run test:all only',
        timeout: 300_000,
        ...(fastLoop ? { skip: true } : {}),
      },
    ],
  };
}

/** Files that replace process-wide state (process.env itself): each runs in a process of its own. */
export const OWN_PROCESS_FILES = ['test/helpers/local-services.test.ts'];

/**
 * Two groups of files (vitest projects). `shared`: every file outside SLOW_FOLDERS runs in one
 * of a few long-lived workers (isolate: false), so the server's modules (Fastify, Kysely, the
 * drivers) load once a worker, not once a file, and run warm (test/README.md, "How long"). Those
 * files start their own servers in fresh folders and put back what they change (environment
 * variables, fake clocks, spies). `own-process`: SLOW_FOLDERS (child processes, signals, minutes
 * of load) and OWN_PROCESS_FILES each get a fresh process, as vitest does by default.
 */
export function testProjects(test: TestOptions): TestProjectInlineConfiguration[] {
  // Test files only: the folders also hold their helpers (fault-world.ts...), which are no suites.
  const ownProcess = [...SLOW_FOLDERS.map((folder) => `${folder}**/*.test.ts`), ...OWN_PROCESS_FILES];
  const exclude = test.exclude ?? configDefaults.exclude;
  return [
    { test: { ...test, name: 'shared', exclude: [...exclude, ...ownProcess], isolate: false } },
    { test: { ...test, name: 'own-process', include: ownProcess, exclude } },
  ];
}

const options = testOptions(false);

export default defineConfig({
  test: {
    ...options,
    projects: testProjects(options),
    // local-services finds PostgreSQL at 127.0.0.1:5432 when TEST_DATABASE_URL is unset, and names
    // each test group it cannot run at the end of the run; required-services makes a missing one an
    // error where SDC_TEST_REQUIRE_ALL=1 (.ci/run). dist and web/dist are built by the tests that
    // need them (test/helpers/lazy-build.ts); cli-build transpiles src for the tests that start `sdc`.
    globalSetup: ['test/helpers/local-services.ts', 'test/helpers/required-services.ts', 'test/helpers/cli-build.ts'],
  },
});
