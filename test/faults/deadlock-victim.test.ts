import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { syntheticRecords } from '../../src/catalog/synthetic-records.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { sleep, sql } from './fault-setup.js';

/**
 * A catalog transaction that PostgreSQL picks as a deadlock's victim (40P01) is run again
 * (src/catalog/first-failure-transaction.ts; docs/reliability.md, "The lifecycle under faults"):
 * a release of two files locks the first, waits for the second, which another session holds
 * and which then asks for the first. The catalog's wait began first, so its deadlock check
 * (deadlock_timeout, 1 s by default) fires first and its transaction is the one rolled back.
 */
describe.skipIf(!TEST_DATABASE_URL)(`a deadlock's victim is run again (PostgreSQL) ${TEST_DATABASE_URL ? '' : NO_DATABASE}`, () => {
  let schema: TestSchema;
  let catalog: Catalog;
  // a before b in path order: the order the rows are stored in, and the UPDATE's scan takes them in.
  const [a, b] = [...syntheticRecords(IMAP_MISSION, 2)]
    .map((r) => ({ ...r, release_date: '2099-01-01T00:00:00.000Z' }))
    .sort((x, y) => (x.file_path < y.file_path ? -1 : 1));

  beforeAll(async () => {
    schema = testSchema();
    catalog = await openCatalog(schema.url);
    await catalog.insertMany([a!, b!]);
  });
  afterAll(async () => {
    await catalog?.close();
    await schema?.drop();
  });

  it('a release crossed by another session\'s locks in the other order commits on its second run', { timeout: 60_000 }, async () => {
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query(`set search_path to "${schema.schema}"`);
      await other.query('begin');
      // This session is never the victim: its own check waits 10 s (the catalog's rolls back within about 1 s).
      await other.query("set local deadlock_timeout = '10s'");
      await other.query('select 1 from files where file_path = $1 for update', [b!.file_path]);
      const release = catalog.publish([a!.file_path, b!.file_path], '2026-01-01T00:00:00.000Z', 7).then(
        (n) => n,
        (err: unknown) => err as Error,
      );
      const waiting = async () =>
        (await sql(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'update "files"%' and datname = current_database()`)).rowCount! > 0;
      for (let waited = 0; !(await waiting()); waited += 100) {
        expect(waited, 'the release waits for the second row').toBeLessThan(20_000);
        await sleep(100);
      }
      // Now the crossing: the first row, which the release holds. PostgreSQL ends the release's transaction.
      await other.query('select 1 from files where file_path = $1 for update', [a!.file_path]);
      await other.query('commit');
      const answer = await release;
      expect(answer instanceof Error ? `${answer.message} (cause: ${String((answer as { cause?: unknown }).cause)})` : answer).toBe(2);
      expect(await catalog.get(b!.file_path)).toMatchObject({ release: 7 });
    } finally {
      await other.end();
    }
  });
});
