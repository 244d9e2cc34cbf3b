import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { undoAfter0010 } from '../helpers/undo-migrations.js';

/**
 * Migration 0009 on a catalog made before it: the api_keys table is made again without the
 * unique name (a name may have a key per generation, for rotation); the keys it held still
 * check as before, revoked ones stay revoked, and names stay taken.
 */
describe('migration 0009 (key generations) keeps the keys of an older catalog', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-keys-migration-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('carries live and revoked keys over, and rotation works on them', async () => {
    const file = join(dir, 'catalog.db');
    const made = await openCatalog(`sqlite:${file}`);
    const live = await made.keys().create('swe-pipeline');
    const gone = await made.keys().create('mag-pipeline');
    await made.keys().revoke('mag-pipeline');
    await made.close();

    // Back to the layout of 0004: one key per name, name unique; 0009 not yet run.
    const db = new Database(file);
    db.exec(`${undoAfter0010('sqlite').join(';\n')};
      create table api_keys_old (key_id text primary key, name text not null unique, key_hash text not null, created_at text not null, revoked_at text);
      insert into api_keys_old select key_id, name, key_hash, created_at, revoked_at from api_keys;
      drop table api_keys;
      alter table api_keys_old rename to api_keys;
      delete from kysely_migration where name in ('0009-api-key-generations', '0010-api-key-roles');`);
    db.close();

    const migrated = await openCatalog(`sqlite:${file}`);
    try {
      const keys = migrated.keys();
      expect(await keys.check(live.key)).toEqual({ kind: 'valid', name: 'swe-pipeline', role: 'uploader' });
      expect(await keys.check(gone.key)).toMatchObject({ kind: 'revoked', name: 'mag-pipeline' });
      await expect(keys.create('swe-pipeline')).rejects.toThrow(/already exists/);
      const rotated = await keys.rotate('swe-pipeline', 60);
      expect(rotated.kind === 'rotated' && (await keys.check(rotated.key))).toEqual({ kind: 'valid', name: 'swe-pipeline', role: 'uploader' });
      expect(await keys.check(live.key)).toEqual({ kind: 'valid', name: 'swe-pipeline', role: 'uploader' });
    } finally {
      await migrated.close();
    }
  });
});
