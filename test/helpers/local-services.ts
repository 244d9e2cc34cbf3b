import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { existsSync } from 'node:fs';
import { CHROMIUM } from './browser.js';

/**
 * Where `npm test` looks for PostgreSQL when TEST_DATABASE_URL is unset: the one `.ci/run` uses,
 * or SDC_TEST_LOCAL_DATABASE_URL.
 */
export function localDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.SDC_TEST_LOCAL_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** Whether a PostgreSQL answers at `url`, within a second or so. */
async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * vitest globalSetup: finds the services the optional test groups need, so `npm test` runs
 * everything the machine can run without being told. TEST_DATABASE_URL unset and a PostgreSQL
 * answering at 127.0.0.1:5432 (database `test`): the variable is set for the test workers, which
 * inherit this process's environment. Each group that cannot run is named at the end of the run,
 * in one line that says how to enable it.
 */
export default async function setup(): Promise<() => void> {
  const skipped: string[] = [];

  if (!process.env.TEST_DATABASE_URL) {
    const local = localDatabaseUrl();
    if (await answers(local)) {
      process.env.TEST_DATABASE_URL = local;
      console.log(`PostgreSQL tests: using the local server at ${local} (set TEST_DATABASE_URL to use another)`);
    } else {
      skipped.push(
        `PostgreSQL tests (catalog contract, coverage, S3 + PostgreSQL flow, two instances, operator commands): no TEST_DATABASE_URL and nothing answers at ${local}; start PostgreSQL there or set TEST_DATABASE_URL=postgres://user@host:5432/db`,
      );
    }
  }
  if (!existsSync(process.env.CHROMIUM_PATH ?? CHROMIUM)) {
    skipped.push(`browser tests of the portal (test/browser): no Chromium at ${process.env.CHROMIUM_PATH ?? CHROMIUM}; apt-get install -y chromium, or set CHROMIUM_PATH`);
  }
  if (spawnSync('python3', ['--version']).status !== 0) {
    skipped.push('python3 tests (agreement with Python tuples; sdc download asking on a terminal): python3 is not on the PATH; install python3');
  }

  return () => {
    for (const line of skipped) console.log(`SKIPPED ${line}`);
  };
}
