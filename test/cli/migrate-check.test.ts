import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { runCli } from '../helpers/run-cli.js';
import { withSqliteFile } from '../helpers/sqlite-file.js';
import { migrations } from '../../src/catalog/migrations.js';
import { POSTGRES_DIALECT } from '../../src/catalog/catalog-dialect.js';
import { undoAfter0011 } from '../helpers/undo-migrations.js';

/** One catalog per engine, reached the way the test needs: a URL for sdc, a statement runner for the schema. */
interface Subject {
  readonly name: 'sqlite' | 'postgres';
  readonly skip: string | false;
  open(): Promise<{ args: string[]; run(statements: readonly string[]): Promise<void>; rows(query: string): Promise<Record<string, unknown>[]>; dispose(): Promise<void> }>;
}

const SUBJECTS: Subject[] = [
  {
    name: 'sqlite',
    skip: false,
    async open() {
      const home = await mkdtemp(join(tmpdir(), 'sdc-migrate-check-'));
      const file = join(home, 'catalog.db');
      const withDb = <T>(use: (db: Database.Database) => T): T => withSqliteFile(file, use);
      return {
        args: ['--home', home],
        run: async (statements) => void withDb((db) => db.exec(statements.join(';\n'))),
        rows: async (query) => withDb((db) => db.prepare(query).all() as Record<string, unknown>[]),
        dispose: () => rm(home, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'postgres',
    skip: TEST_DATABASE_URL ? false : NO_DATABASE,
    async open() {
      const schema: TestSchema = testSchema();
      const query = async (text: string) => {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
        await client.connect();
        try {
          return (await client.query<Record<string, unknown>>(text)).rows;
        } finally {
          await client.end();
        }
      };
      return {
        args: ['--catalog', schema.url],
        run: async (statements) => void (await query(statements.join(';\n'))),
        rows: query,
        dispose: () => schema.drop(),
      };
    },
  },
];

// docs/deploy.md "Upgrading without downtime": what `sdc migrate --check` says of a catalog the
// previous release (0.1.0: migrations up to 0011) made, and that the release's own inserts
// stay public on the migrated schema.
describe.each(SUBJECTS)('sdc migrate --check on $name', ({ name, skip, open }) => {
  let subject: Awaited<ReturnType<Subject['open']>>;
  beforeAll(async () => {
    if (skip) return;
    subject = await open();
    expect((await runCli(['migrate', '--create', ...subject.args])).code).toBe(0);
    // The schema as 0.1.0 left it.
    await subject.run(undoAfter0011(name));
  }, 60_000);
  afterAll(async () => {
    await subject?.dispose();
  });

  it.skipIf(skip)(`${skip || ''}names 0012 and later as expand steps, says 0.1.0 may keep serving, applies nothing`, { timeout: 60_000 }, async () => {
    const checked = await runCli(['migrate', '--check', ...subject.args]);
    expect(checked.stderr).not.toContain('Error');
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain('applied: 11 migration(s), newest 0011-lifecycle');
    // Every migration after 0.1.0's, each an expand step.
    const after0011 = Object.keys(migrations(POSTGRES_DIALECT)).filter((name) => name > '0011-lifecycle');
    expect(checked.stdout).toContain(`pending:\n${after0011.map((name) => `  ${name} (expand)\n`).join('')}`);
    expect(checked.stdout).toContain('instances of the previous release may keep serving on the migrated schema');
    expect(await subject.rows("SELECT name FROM kysely_migration WHERE name = '0012-access'")).toEqual([]);

    const applied = await runCli(['migrate', ...subject.args]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`applied ${after0011.length} migration(s)`);
    const again = await runCli(['migrate', '--check', ...subject.args]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('pending: none, the schema is up to date');
  });

  it.skipIf(skip)(`${skip || ''}dates a record inserted as 0.1.0 inserts it (no release_date) public from its ingestion`, async () => {
    const ingested = '2026-11-20T10:00:00.000Z';
    // 0.1.0's insert names the columns it knows (src/catalog/record-columns.ts at 856c101).
    await subject.run([
      'INSERT INTO files (file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_date, size, sha256, uploader, is_latest) ' +
        `VALUES ('imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240101_v001.cdf', 'swe', 'l1a', 'sci', '2024-01-01T00:00:00', '2024-01-01T23:59:59', 'v001', 'cdf', '${ingested}', 3, 'ab', NULL, 1)`,
    ]);
    expect(await subject.rows("SELECT release_date FROM files WHERE descriptor = 'sci'")).toEqual([{ release_date: ingested }]);
    // This release names release_date on every insert: a NULL it writes (a team file with no date) stays NULL.
    await subject.run([
      'INSERT INTO files (file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_date, size, sha256, uploader, is_latest, release_date) ' +
        `VALUES ('imap/swe/l1a/2024/01/imap_swe_l1a_team_20240101_v001.cdf', 'swe', 'l1a', 'team', '2024-01-01T00:00:00', '2024-01-01T23:59:59', 'v001', 'cdf', '${ingested}', 3, 'ab', NULL, 1, NULL)`,
    ]);
    expect(await subject.rows("SELECT release_date FROM files WHERE descriptor = 'team'")).toEqual([{ release_date: null }]);
  });
});
