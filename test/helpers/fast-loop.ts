import { spawnSync } from 'node:child_process';

/**
 * vitest globalSetup of `npm test` (vitest.fast.config.ts): at the end of the run, says what the
 * fast loop left out and where it runs, so nobody takes a green fast loop for the whole suite.
 */
export default function setup(): () => void {
  return () => {
    console.log(
      'npm test ran the fast loop (SQLite and the local store). PostgreSQL, S3 (radosgw), nginx, Chromium, faults, deploy, ' +
        'reliability and the tests tagged slow run in npm run test:all (test/README.md)',
    );
    if (spawnSync('python3', ['--version']).status !== 0) {
      console.log('SKIPPED python3 tests (agreement with Python tuples; sdc download asking on a terminal): python3 is not on the PATH; install python3');
    }
  };
}
