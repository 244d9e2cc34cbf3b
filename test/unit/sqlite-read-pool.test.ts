import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteReadPool } from '../../src/catalog/sqlite/sqlite-read-pool.js';

/** A statement that runs as long as SQLite takes to count to `n` (a few seconds for 20 million here). */
// (The budget below includes starting a thread, a few hundred ms on a loaded machine.)
const countTo = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n}) SELECT count(*) FROM n`;

describe('the SQLite reading threads', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-read-pool-'));
    file = join(dir, 'catalog.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    db.close();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers rows as arrays and single values', async () => {
    const pool = new SqliteReadPool(file);
    try {
      expect(await pool.run('SELECT x, x * 2 FROM t WHERE x > ? ORDER BY x', [1])).toEqual([[2, 4], [3, 6]]);
      expect(await pool.run('SELECT count(*) FROM t', [], 'value')).toBe(3);
      await expect(pool.run('SELECT nope FROM t', [])).rejects.toThrow(/no such column/);
    } finally {
      await pool.close();
    }
  });

  it('stops a statement past its budget with SDC_OUT_OF_TIME and Retry-After, then goes on answering', { timeout: 90_000 }, async () => {
    const pool = new SqliteReadPool(file, 1, 2000);
    try {
      const stopped = await pool.run(countTo(20_000_000), []).then(
        () => undefined,
        (err: unknown) => err as { code?: string; statusCode?: number; headers?: Record<string, string> },
      );
      expect(stopped).toMatchObject({ code: 'SDC_OUT_OF_TIME', statusCode: 503 });
      expect(stopped?.headers?.['Retry-After']).toBeDefined();
      // Answered by the thread that took the stopped one's place, before that one's statement ends.
      expect(await pool.run('SELECT count(*) FROM t', [], 'value')).toBe(3);
    } finally {
      await pool.close();
    }
  });

  // A long count (seconds on a quiet machine) measured by nothing but its order: time enough for a loaded one.
  it('runs statements beside one another, one per thread', { timeout: 120_000 }, async () => {
    const pool = new SqliteReadPool(file, 2, 60_000);
    try {
      // While one thread counts for long, the other answers.
      let longDone = false;
      const long = pool.run(countTo(20_000_000), [], 'value').then((n) => ((longDone = true), n));
      expect(await pool.run('SELECT count(*) FROM t', [], 'value')).toBe(3);
      expect(longDone).toBe(false);
      expect(await long).toBe(20_000_000);
    } finally {
      await pool.close();
    }
  });
});
