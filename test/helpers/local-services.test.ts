import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import setup, { localDatabaseUrl } from './local-services.js';

// The globalSetup itself, called in this worker with a controlled environment.
describe('npm test finds the local services and names what it skips', () => {
  const saved = { ...process.env };
  let printed: string[];
  beforeEach(() => {
    printed = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...saved };
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('uses the PostgreSQL answering at 127.0.0.1:5432 when TEST_DATABASE_URL is unset', async () => {
    const url = saved.TEST_DATABASE_URL ?? localDatabaseUrl();
    delete process.env.TEST_DATABASE_URL;
    process.env.SDC_TEST_LOCAL_DATABASE_URL = url;
    const teardown = await setup();
    // The suite itself runs with a database (npm test found it, or CI set it): so does the probe.
    expect(process.env.TEST_DATABASE_URL).toBe(url);
    expect(printed).toEqual([`PostgreSQL tests: using the local server at ${url} (set TEST_DATABASE_URL to use another)`]);
    teardown();
    expect(printed.filter((line) => line.startsWith('SKIPPED PostgreSQL'))).toEqual([]);
  });

  it('prints one line per skipped group, naming it and how to enable it', async () => {
    delete process.env.TEST_DATABASE_URL;
    process.env.SDC_TEST_LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:1/test';
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    process.env.PATH = '/nonexistent';
    const teardown = await setup();
    expect(process.env.TEST_DATABASE_URL).toBeUndefined();
    expect(printed).toEqual([]);
    teardown();
    expect(printed).toHaveLength(3);
    expect(printed[0]).toMatch(/^SKIPPED PostgreSQL tests \(.*\): no TEST_DATABASE_URL and nothing answers at postgres:\/\/postgres@127\.0\.0\.1:1\/test; start PostgreSQL there or set TEST_DATABASE_URL=/);
    expect(printed[1]).toBe('SKIPPED browser tests of the portal (test/browser): no Chromium at /nonexistent/chromium; apt-get install -y chromium, or set CHROMIUM_PATH');
    expect(printed[2]).toMatch(/^SKIPPED python3 tests .*install python3$/);
  });
});
