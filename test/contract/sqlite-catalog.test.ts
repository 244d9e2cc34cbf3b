import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { testCatalog } from './catalog-contract.js';

testCatalog('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-catalog-'));
  const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
  return {
    catalog,
    async dispose() {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('an SQLite catalog this version cannot open', () => {
  /** Handles this process holds on files under `dir`. */
  const handlesUnder = (dir: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
      } catch {
        return false; // closed between the listing and the read
      }
    }).length;

  it.skipIf(!existsSync('/proc/self/fd'))('refuses one a newer version migrated, saying so, and keeps no handle on it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-catalog-newer-'));
    try {
      const file = join(dir, 'catalog.db');
      await (await openCatalog(`sqlite:${file}`)).close();
      const db = new Database(file);
      db.prepare("INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-from-a-later-version', '2030-01-01T00:00:00.000Z')").run();
      db.close();
      expect(handlesUnder(dir)).toBe(0);
      for (let i = 0; i < 3; i++) {
        await expect(openCatalog(`sqlite:${file}`)).rejects.toThrow(
          `cannot open the SQLite catalog ${file}: the catalog has been migrated by a newer version of sdc (migration 9999-from-a-later-version, which this version does not know); use that version or a later one`,
        );
      }
      expect(handlesUnder(dir)).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('an SQLite catalog whose reading threads meet a driver failure', () => {
  it('reports a query page, a count and coverage as SDC_BACKEND_FAILED with the SQLite error as cause', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-catalog-failing-'));
    const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    try {
      // Another connection takes the tables away: the threads' statements then fail in SQLite itself.
      const db = new Database(join(dir, 'catalog.db'));
      db.exec('ALTER TABLE files RENAME TO files_gone; ALTER TABLE coverage_days RENAME TO coverage_days_gone');
      db.close();
      const firstOf = async <T>(items: AsyncIterable<T>) => {
        for await (const item of items) return item;
        return undefined;
      };
      const reads: [string, () => Promise<unknown>][] = [
        ['read', () => firstOf(catalog.query({}))],
        ['count', () => catalog.count({})],
        ['coverage', () => firstOf(catalog.coverage({}))],
      ];
      for (const [operation, read] of reads) {
        const failure = await read().then(
          () => undefined,
          (err: unknown) => err as { code?: string; message?: string; cause?: { code?: string } },
        );
        expect(failure, operation).toMatchObject({ code: 'SDC_BACKEND_FAILED', statusCode: 500, message: `SQLite catalog: ${operation} failed` });
        expect(failure?.cause?.code).toMatch(/^SQLITE_/);
      }
    } finally {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("an SQLite catalog's reads of one path", () => {
  it('answers a query and a count that name a path on its own connection, before reads waiting for the reading threads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sdc-catalog-point-'));
    const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
    try {
      const [record, other] = [...syntheticRecords(IMAP_MISSION, 2)];
      await catalog.insertMany([record!, other!]);
      const order: string[] = [];
      const done = (label: string) => (value: unknown) => {
        order.push(label);
        return value;
      };
      const all = async <T>(items: AsyncIterable<T>) => {
        const found: T[] = [];
        for await (const item of items) found.push(item);
        return found;
      };
      // Both reading threads (READ_THREADS) busy, a third read waiting for one of them.
      const long = [catalog.count({}), catalog.count({ audience: 'public' }), all(catalog.query({}))].map((read, i) => read.then(done(`thread ${i}`)));
      const byPath = all(catalog.query({ file_path: record!.file_path })).then(done('query by path'));
      const counted = catalog.count({ file_path: other!.file_path }).then(done('count by path'));
      const [found, count] = await Promise.all([byPath, counted, ...long]);
      expect(found).toEqual([record]);
      expect(count).toBe(1);
      expect(order.slice(0, 2).sort()).toEqual(['count by path', 'query by path']);
    } finally {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
