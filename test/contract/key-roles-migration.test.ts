import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { undoAfter0010 } from '../helpers/undo-migrations.js';
import { TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';

/**
 * Migration 0010 on a catalog made before roles existed: every key it held becomes an
 * `uploader` (docs/api.md, "API keys"), live ones still check, revoked ones stay revoked, and
 * new keys of either role can be made beside them. Run on both engines.
 */
const engines: { name: string; skip: boolean; open(dir: string): Promise<{ url: string; run(sql: string[]): Promise<void>; dispose(): Promise<void> }> }[] = [
  {
    name: 'sqlite',
    skip: false,
    open: async (dir) => {
      const file = join(dir, 'catalog.db');
      return {
        url: `sqlite:${file}`,
        run: async (statements) => {
          const db = new Database(file);
          try {
            for (const s of statements) db.exec(s);
          } finally {
            db.close();
          }
        },
        dispose: async () => undefined,
      };
    },
  },
  {
    name: 'postgres',
    skip: !TEST_DATABASE_URL,
    open: async () => {
      const schema = testSchema();
      return {
        url: schema.url,
        run: async (statements) => {
          const client = new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: 'sdc-key-roles-migration-test' });
          await client.connect();
          try {
            await client.query(`set search_path to "${schema.schema}"`);
            for (const s of statements) await client.query(s);
          } finally {
            await client.end();
          }
        },
        dispose: () => schema.drop(),
      };
    },
  },
];

describe.each(engines)('$name: migration 0010 (key roles) on a catalog with keys', ({ name, skip, open }) => {
  let dir: string;
  let subject: Awaited<ReturnType<(typeof engines)[number]['open']>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-key-roles-'));
    if (!skip) subject = await open(dir);
  });
  afterAll(async () => {
    if (!skip) await subject.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('makes the keys it finds uploaders, keeps revoked ones revoked, and takes curator keys after', async () => {
    const made = await openCatalog(subject.url);
    const live = await made.keys().create('swe-pipeline');
    const gone = await made.keys().create('mag-pipeline');
    await made.keys().revoke('mag-pipeline');
    await made.close();

    // Back to the schema of 0009: api_keys without a role.
    await subject.run([...undoAfter0010(name === 'sqlite' ? 'sqlite' : 'postgres'), 'ALTER TABLE api_keys DROP COLUMN role', "DELETE FROM kysely_migration WHERE name = '0010-api-key-roles'"]);

    const migrated = await openCatalog(subject.url);
    try {
      const keys = migrated.keys();
      expect(await keys.check(live.key)).toEqual({ kind: 'valid', name: 'swe-pipeline', role: 'uploader' });
      expect(await keys.check(gone.key)).toMatchObject({ kind: 'revoked', name: 'mag-pipeline' });
      expect((await keys.list()).map((k) => [k.name, k.role])).toEqual([
        ['mag-pipeline', 'uploader'],
        ['swe-pipeline', 'uploader'],
      ]);
      const curator = await keys.create('archive-curator', 'curator');
      expect(await keys.check(curator.key)).toEqual({ kind: 'valid', name: 'archive-curator', role: 'curator' });
      const rotated = await keys.rotate('swe-pipeline', 60);
      expect(rotated.kind === 'rotated' && rotated.info.role).toBe('uploader');
    } finally {
      await migrated.close();
    }
  });
});
