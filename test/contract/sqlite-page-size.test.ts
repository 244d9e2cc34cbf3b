// @module-tag slow (catalogs large enough to show their page size, ~50 s loaded: npm run test:all, test/README.md)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/index.js';
import { NEW_CATALOG_PAGE_SIZE, openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { IMAP_MISSION } from '../../src/mission/mission-config.js';

/** A new SQLite catalog file gets 16 KiB pages; one that exists keeps the page size it has. */
describe('sqlite: page size of a catalog file', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const pageSizeOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.pragma('page_size', { simple: true });
    } finally {
      db.close();
    }
  };
  const loadAndRead = async (file: string, first = 0) => {
    const catalog = await openSqliteCatalog(file);
    try {
      // Large enough for the bulk load's path that sets the indexes aside (REBUILD_AT).
      expect(await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 25_000, first))).toBe(25_000);
      const one = [...syntheticRecords(IMAP_MISSION, 1, first + 12_345)][0]!;
      expect(await catalog.get(one.file_path)).toEqual(one);
      expect(await catalog.count({ instrument: one.instrument })).toBeGreaterThan(0);
    } finally {
      await catalog.close();
    }
  };

  it('creates a new catalog with 16 KiB pages', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-pages-'));
    dirs.push(dir);
    const file = join(dir, 'catalog.db');
    await loadAndRead(file);
    expect(NEW_CATALOG_PAGE_SIZE).toBe(16_384);
    expect(pageSizeOf(file)).toBe(16_384);
  });

  it('leaves an existing catalog with the page size it was created with', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-pages-'));
    dirs.push(dir);
    const file = join(dir, 'catalog.db');
    // A file as an earlier version left it: SQLite's default 4 KiB pages, WAL.
    const old = new Database(file);
    old.pragma('page_size = 4096');
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE made_before (x)');
    old.close();
    await loadAndRead(file);
    await loadAndRead(file, 25_000);
    expect(pageSizeOf(file)).toBe(4096);
  });
});
