import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { POSTGRES_DIALECT } from '../../src/catalog/catalog-dialect.js';
import { migrations } from '../../src/catalog/migrations.js';
import { SDC_BIN } from '../helpers/child-server.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { recordFigures } from '../reliability/figures.js';
import { sleep, sql } from './fault-setup.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `sdc <args>` from the build, as an operator runs it. */
function sdc(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SDC_BIN, ...args], { env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The catalog URL of `schema` with an application_name of its own: only its backends are ever terminated. */
function catalogUrl(schema: TestSchema, applicationName: string): string {
  const url = new URL(schema.url);
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}

/** Waits until a backend of `applicationName` matches `where` (SQL on pg_stat_activity), then terminates that application's backends. */
async function terminateWhen(applicationName: string, where: string, withinMs = 60_000): Promise<number> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const { rowCount } = await sql(`select 1 from pg_stat_activity where application_name = $1 and ${where}`, [applicationName]);
    if (rowCount) {
      return (await sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [applicationName])).rowCount ?? 0;
    }
    await sleep(25);
  }
  throw new Error(`no backend of ${applicationName} came to ${where}`);
}

/**
 * The operator commands when their PostgreSQL backends are terminated mid-work (a failover, an
 * administrator's pg_terminate_backend): the command ends with a clear message, never an
 * unhandled 'error' event; nothing is half-applied; and the next run succeeds
 * (docs/reliability.md, *Faults at scale*).
 */
describe.skipIf(!TEST_DATABASE_URL)(`catalog commands when their backends are terminated${TEST_DATABASE_URL ? '' : `: ${NO_DATABASE}`}`, () => {
  const schemas: TestSchema[] = [];
  const rows: Record<string, number | string> = {};
  afterEach(async () => {
    recordFigures('faults-catalog-commands', rows);
    for (const schema of schemas.splice(0)) await schema.drop();
  });

  it('sdc migrate terminated between two migrations of one run: fails saying so, applies nothing, and the next run applies all', { timeout: 120_000 }, async () => {
    const schema = testSchema();
    schemas.push(schema);
    // A catalog of an earlier version: migrated up to 0007 by the migrations the service ships.
    await sql(`create schema "${schema.schema}"`);
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}`, max: 2 });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations(POSTGRES_DIALECT)) }, migrationTableSchema: schema.schema });
    expect((await migrator.migrateTo('0007-covering-search-index')).error).toBeUndefined();
    // 0008 alters files (free); 0009 copies api_keys, which the test holds locked: the run stops between the two.
    const holder = await pool.connect();
    await holder.query('begin');
    await holder.query('lock table api_keys in access exclusive mode');
    const applicationName = `sdc-migrate-${randomBytes(4).toString('hex')}`;
    try {
      const run = sdc(['migrate', '--catalog', catalogUrl(schema, applicationName)]);
      expect(await terminateWhen(applicationName, "wait_event_type = 'Lock'")).toBeGreaterThan(0);
      const cut = await run;
      rows['sdc migrate, backend terminated mid-run: exit code'] = cut.code ?? 'signal';
      rows['sdc migrate, backend terminated mid-run: message'] = cut.stderr.trim().split('\n').at(-1) ?? '';
      expect(cut.code).toBe(1);
      expect(cut.stderr).not.toMatch(/Unhandled 'error' event|at .*node_modules/);
      expect(cut.stderr).toMatch(/^sdc: cannot open the PostgreSQL catalog .*(terminat|connection)/im);
      expect(cut.stderr).toMatch(/SDC_CATALOG_UNAVAILABLE.*run the command again/);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    // Nothing of the cut run stays: 0008's column is not there, the migrations recorded are 0001-0007.
    const applied = await sql(`select name from "${schema.schema}".kysely_migration order by name`);
    expect(applied.rows.map((r: { name: string }) => r.name).at(-1)).toBe('0007-covering-search-index');
    const column = await sql(`select 1 from information_schema.columns where table_schema = $1 and table_name = 'files' and column_name = 'is_latest'`, [schema.schema]);
    expect(column.rowCount).toBe(0);
    await db.destroy();

    const again = await sdc(['migrate', '--catalog', schema.url]);
    expect(again.code, again.stderr).toBe(0);
    // Every migration after 0007, in order (derived: a new migration does not break this test).
    const after0007 = Object.keys(migrations(POSTGRES_DIALECT)).filter((name) => name > '0007-covering-search-index');
    expect(again.stdout).toContain(`applied ${after0007.length} migration(s)`);
    expect(again.stdout.match(/^ {2}\d{4}-\S+$/gm)).toEqual(after0007.map((name) => `  ${name}`));
    rows['sdc migrate, next run'] = again.stdout.split('\n')[0]!.replace(/ to .*/, '');
  });

  it('sdc seed (bulk load, COPY) terminated mid-load: fails saying so, and the next run completes the catalog exactly', { timeout: 180_000 }, async () => {
    const schema = testSchema();
    schemas.push(schema);
    const count = 150_000;
    const applicationName = `sdc-seed-${randomBytes(4).toString('hex')}`;
    const run = sdc(['seed', '--count', String(count), '--catalog', catalogUrl(schema, applicationName), '--create']);
    expect(await terminateWhen(applicationName, "query ilike 'copy %'")).toBeGreaterThan(0);
    const cut = await run;
    rows['sdc seed, backend terminated mid-COPY: exit code'] = cut.code ?? 'signal';
    rows['sdc seed, backend terminated mid-COPY: message'] = cut.stderr.trim().split('\n').at(-1) ?? '';
    expect(cut.code).toBe(1);
    expect(cut.stderr).not.toMatch(/Unhandled 'error' event|at .*node_modules/);
    expect(cut.stderr).toMatch(/^sdc: PostgreSQL catalog: .+ \(.+\)$/m);
    expect(cut.stderr).toMatch(/SDC_CATALOG_UNAVAILABLE.*run the command again/);
    const kept = Number((await sql(`select count(*) as n from "${schema.schema}".files`)).rows[0].n);
    rows['sdc seed, records committed before the cut (of 150000)'] = kept;

    const again = await sdc(['seed', '--count', String(count), '--catalog', schema.url]);
    expect(again.code, again.stderr).toBe(0);
    const files = Number((await sql(`select count(*) as n from "${schema.schema}".files`)).rows[0].n);
    expect(files).toBe(count);
    // The latest flags and coverage rows agree with the files (what a half-applied load would break).
    const latest = await sql(
      `select count(*) as n from "${schema.schema}".files f where f.is_latest = 1 and exists (select 1 from "${schema.schema}".files g
         where g.instrument = f.instrument and g.data_level = f.data_level and g.descriptor = f.descriptor and g.start_date = f.start_date and g.version > f.version)`,
    );
    expect(Number(latest.rows[0].n)).toBe(0);
    rows['sdc seed, next run'] = again.stderr.trim().split('\n').at(-1)!.replace(/ in [\d.]+ s.*/, '');
  });
});
