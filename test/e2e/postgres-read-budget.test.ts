import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type Catalog } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/**
 * The time budget of anonymous reads on PostgreSQL (docs/performance.md, "Time budget"): a read
 * outside a transaction that runs past `read_budget_ms` is cancelled by PostgreSQL and answered
 * SDC_OUT_OF_TIME (503, Retry-After), while writes and bulk loads wait as long as they must.
 * The slowness is a lock this test holds on the catalog's tables, so it is the server's own
 * statements, on its own path, that wait.
 */
const BUDGET_MS = 300;
const APP = `sdc-read-budget-${process.pid}`;

describe.skipIf(!TEST_DATABASE_URL)(`PostgreSQL read budget${TEST_DATABASE_URL ? '' : ` (${NO_DATABASE})`}`, () => {
  let schema: TestSchema;
  let server: TestServer;
  let locker: pg.Client;

  beforeAll(async () => {
    schema = testSchema();
    const url = new URL(schema.url);
    url.searchParams.set('read_budget_ms', String(BUDGET_MS));
    url.searchParams.set('application_name', APP);
    server = await startTestServer({ catalog: url.toString() });
    expect((await uploadFile(server.url, SAMPLE_PATH, 'swe bytes')).status).toBe(200);
    locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await locker.connect();
  }, 60_000);

  afterAll(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    await locker?.end();
    await server?.stop();
    await schema?.drop();
  });

  /** Holds `mode` on the catalog's tables until `release` (a transaction of the test's own connection). */
  async function lockTables(mode: string): Promise<{ release(): Promise<void> }> {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schema.schema}".files, "${schema.schema}".coverage_days IN ${mode} MODE`);
    return { release: () => locker.query('COMMIT').then(() => undefined) };
  }

  /** Resolves once one of the server's statements has waited for a lock more than `ms` (clock_timestamp: now() stops at the transaction's start). */
  async function someoneWaited(ms: number): Promise<void> {
    for (;;) {
      const { rows } = await locker.query(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND clock_timestamp() - query_start > $2 * interval '1 millisecond'",
        [APP, ms],
      );
      if (rows.length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('answers a query and a coverage read past the budget SDC_OUT_OF_TIME with Retry-After, then answers again', async () => {
    const lock = await lockTables('ACCESS EXCLUSIVE');
    try {
      for (const path of ['/query?instrument=swe', '/coverage?instrument=swe&version=*&start_date=20240101&end_date=20240131']) {
        const started = performance.now();
        const res = await fetch(`${server.url}${path}`);
        await res.arrayBuffer();
        expect(res.status, path).toBe(503);
        expect(res.headers.get('x-error-code'), path).toBe('SDC_OUT_OF_TIME');
        expect(res.headers.get('retry-after'), path).toBe('30');
        expect(performance.now() - started, path).toBeGreaterThanOrEqual(BUDGET_MS - 20);
      }
    } finally {
      await lock.release();
    }
    const res = await fetch(`${server.url}/query?instrument=swe`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { file_path: string }[]).map((r) => r.file_path)).toEqual([SAMPLE_PATH]);
  }, 30_000);

  it('lets an upload wait for its write past the budget, and stores it', async () => {
    const path = SAMPLE_PATH.replaceAll('20240105', '20240106');
    const address = (await (await fetch(`${server.url}/upload/${path}`)).json()) as string;
    // Readers pass, writers wait: only the upload's writing statements are held up.
    const lock = await lockTables('EXCLUSIVE');
    let put: Promise<Response>;
    try {
      put = fetch(address, { method: 'PUT', body: 'later bytes', headers: { 'Content-Type': '' } });
      await someoneWaited(3 * BUDGET_MS);
    } finally {
      await lock.release();
    }
    expect((await put).status).toBe(200);
    expect((await (await fetch(`${server.url}/query?start_date=20240106`)).json()) as unknown[]).toHaveLength(1);
  }, 30_000);

  it('lets a bulk load wait past the budget, and loads every record', async () => {
    const url = new URL(schema.url);
    url.searchParams.set('read_budget_ms', String(BUDGET_MS));
    url.searchParams.set('application_name', APP);
    const catalog: Catalog = await openCatalog(url.toString());
    try {
      const lock = await lockTables('EXCLUSIVE');
      let load: Promise<number>;
      try {
        load = catalog.bulkLoad(syntheticRecords(IMAP_MISSION, 50));
        await someoneWaited(3 * BUDGET_MS);
      } finally {
        await lock.release();
      }
      expect(await load).toBe(50);
    } finally {
      await catalog.close();
    }
  }, 30_000);
});
