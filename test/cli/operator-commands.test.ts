import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { runCli } from '../helpers/run-cli.js';

// The operator commands run as a user runs them: a child process, from a folder that is not
// the server's, with the real catalog files.
describe('operator commands say where they act and never create a catalog unasked', { timeout: 120_000 }, () => {
  let elsewhere: string;
  let home: string;
  beforeAll(async () => {
    elsewhere = await mkdtemp(join(tmpdir(), 'sdc-elsewhere-'));
    home = await mkdtemp(join(tmpdir(), 'sdc-home-'));
  });
  afterAll(async () => {
    await rm(elsewhere, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  it.each([
    [['keys', 'create', 'swe-pipeline']],
    [['keys', 'list']],
    [['keys', 'revoke', 'swe-pipeline']],
    [['migrate']],
    [['seed', '--count', '10']],
    [['reconcile']],
    [['audit']],
  ])('sdc %j in a folder without a catalog: names it, refuses (exit 2), creates nothing', async (args) => {
    const result = await runCli(args, { cwd: elsewhere });
    const expected = join(elsewhere, 'sdc-data', 'catalog.db');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`catalog: sqlite:${expected}`);
    expect(result.stderr).toContain(`there is no catalog at sqlite:${expected}; nothing was changed.`);
    expect(result.stderr).toContain('--create');
    expect(result.stdout).toBe('');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('--create makes one; then keys, seed, reconcile act on it and say so (reconcile names the store too)', async () => {
    const catalog = join(home, 'catalog.db');
    const created = await runCli(['migrate', '--home', home, '--create'], { cwd: elsewhere });
    expect(created.code).toBe(0);
    expect(created.stderr).toContain(`catalog: sqlite:${catalog}`);
    expect(existsSync(catalog)).toBe(true);
    // It says what it applied, by name; run again, that there was nothing to apply.
    expect(created.stdout).toMatch(new RegExp(`^applied (\\d+) migration\\(s\\) to sqlite:${catalog}:\n  0001-files\n  0002-query-indexes\n`));
    expect(created.stdout).toContain('  0008-latest-flag-and-coverage-days\n  0009-api-key-generations\n  0010-api-key-roles\n  0011-lifecycle\n  0012-access\n  0013-releases\n  0014-audit-reads\n  0015-change-log-at-commit\n  0016-public-path-indexes\n  0017-descriptor-days\ncatalog schema is up to date\n');
    const again = await runCli(['migrate', '--home', home], { cwd: elsewhere });
    expect(again.stdout).toBe(`catalog schema is up to date, nothing to apply: sqlite:${catalog}\n`);

    const key = await runCli(['keys', 'create', 'swe-pipeline', '--home', home], { cwd: elsewhere });
    expect(key.code).toBe(0);
    expect(key.stdout).toMatch(/^sdc_\w+/);
    expect(key.stderr).toContain(`catalog: sqlite:${catalog}`);

    const listed = await runCli(['keys', 'list'], { cwd: elsewhere, env: { SDC_HOME: home } });
    expect(listed.stdout).toMatch(/^swe-pipeline\s+uploader\s/m);

    const refused = await runCli(['keys', 'create', 'ops', '--role', 'root', '--home', home], { cwd: elsewhere });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--role expects one of uploader, curator, reader, got "root"');

    const seeded = await runCli(['seed', '--count', '5', '--catalog', `sqlite:${catalog}`], { cwd: elsewhere });
    expect(seeded.code).toBe(0);
    expect(seeded.stderr).toContain('seeded 5 new records');

    const reconciled = await runCli(['reconcile', '--home', home], { cwd: elsewhere });
    expect(reconciled.code).toBe(0);
    expect(reconciled.stderr).toContain(`catalog: sqlite:${catalog}`);
    expect(reconciled.stderr).toContain(`store:   file:${join(home, 'store')}`);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'on PostgreSQL' : NO_DATABASE, () => {
    it('refuses a schema that was never created, creates it with --create, password hidden', async () => {
      const schema = testSchema();
      try {
        const url = new URL(schema.url);
        url.password = 'not-shown';
        const refused = await runCli(['keys', 'list', '--catalog', url.toString()], { cwd: elsewhere });
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('there is no catalog at postgres://');
        expect(refused.stderr).toContain(schema.schema);
        expect(refused.stderr).not.toContain('not-shown');

        expect((await runCli(['migrate', '--create', '--catalog', schema.url], { cwd: elsewhere })).code).toBe(0);
        const listed = await runCli(['keys', 'list', '--catalog', schema.url], { cwd: elsewhere });
        expect(listed.code).toBe(0);
        expect(listed.stderr).toContain('No keys');
      } finally {
        await schema.drop();
      }
    });
  });
});
