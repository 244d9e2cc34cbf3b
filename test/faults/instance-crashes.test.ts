import { createHash, randomBytes } from 'node:crypto';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { partsUploaded } from '../helpers/parts-upload.js';
import { TEST_DATABASE_URL } from '../helpers/postgres-test-schema.js';
import { recordFigures } from '../reliability/figures.js';
import { FaultWorld } from './fault-world.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long after a fault ends every acknowledged upload must be findable (docs/reliability.md). */
const FINDABLE_WITHIN_MS = 15_000;

/** Waits for `check` to hold, up to `withinMs`; the milliseconds it took, or undefined. */
async function waitFor(check: () => Promise<boolean>, withinMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (await check()) return Date.now() - started;
    await sleep(200);
  }
  return undefined;
}

/** Runs SQL on the test database as the test (not through the service's proxy). */
async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, statement_timeout: 10_000 });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * Instances that die or start at the worst moment (docs/reliability.md, *Faults at scale*):
 * two `sdc serve` on RGW + PostgreSQL through proxies the test controls.
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`instance crashes: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let world: FaultWorld;
  const rows: Record<string, number | string> = {};

  beforeAll(async () => {
    world = await FaultWorld.start();
  }, 120_000);
  afterAll(async () => {
    recordFigures('faults-instance-crashes', rows);
    await world?.stop();
  }, 60_000);

  it('an upload in parts whose instance is SIGKILLed between the store joining it and its record is findable within 15 s', { timeout: 120_000 }, async () => {
    const name = 'imap_swe_l1a_sci_20300101_20300101_v00-01.cdf';
    const path = `imap/swe/l1a/2030/01/${name}`;
    const bytes = randomBytes(256 * 1024);
    const { schema } = world.schema;
    // The record's INSERT stalls (a trigger sleeping on this one name), so the instance can be
    // killed with the bytes under their name and no record, as a crash at that instant leaves it.
    await sql(`create function "${schema}".stall_insert() returns trigger language plpgsql as $$ begin perform pg_sleep(120); return new; end $$`);
    await sql(`create trigger stall_insert before insert on "${schema}".files for each row when (new.file_path = '${path}') execute function "${schema}".stall_insert()`);

    const { uploadId, parts } = await partsUploaded(world.b.url, path, bytes, bytes.length);
    const completion = fetch(`${world.b.url}/uploads/${path}?uploadId=${encodeURIComponent(uploadId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts }),
    }).then(
      (res) => res.status,
      () => 'no answer',
    );
    const stalled = async () =>
      (await sql(`select 1 from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [world.applicationName])).rowCount! > 0;
    expect(await waitFor(stalled, 30_000), 'the record is being written').toBeDefined();
    const stored = await world.rgw.client.send(new HeadObjectCommand({ Bucket: world.bucket, Key: path })).then(
      () => true,
      () => false,
    );
    expect(stored, 'the bytes are under their name').toBe(true);

    await world.b.kill('SIGKILL');
    // Replaced, not dropped: dropping would wait for the stalled INSERT's lock on the table.
    await sql(`create or replace function "${schema}".stall_insert() returns trigger language plpgsql as $$ begin return new; end $$`);
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [world.applicationName]);
    rows['upload in parts, instance killed before its record: completion answered'] = await completion;

    const found = async () => {
      const res = await world.ask(world.a, `/query?file_path=${name}`);
      const records = res?.status === 200 ? ((await res.json()) as { sha256: string }[]) : [];
      return records.length === 1 && records[0]!.sha256 === createHash('sha256').update(bytes).digest('hex');
    };
    const findableMs = await waitFor(found, FINDABLE_WITHIN_MS);
    rows['upload in parts, instance killed before its record: ms until findable'] = findableMs ?? `not within ${FINDABLE_WITHIN_MS}`;
    expect(findableMs, 'findable within 15 s of the kill, with nothing done by hand').toBeDefined();
    // The joined object the dead completion left is discarded once the record is in.
    const assemblies = async () => ((await world.rgw.client.send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: '.multipart/' }))).KeyCount ?? 0) === 0;
    expect(await waitFor(assemblies, 10_000), 'joined objects left').toBeDefined();

    expect(world.a.unexpectedExits).toEqual([]);
    await world.b.start();
  });
  for (const outage of ['refused (RGW stopped)', 'black-holed (unreachable)'] as const) {
    it(`an instance restarted while the store is ${outage}: listens, /healthz and queries 200, uploads 503 with Retry-After, and recovers`, { timeout: 120_000 }, async () => {
      const label = `restart while the store is ${outage.split(' ')[0]}`;
      await world.b.kill('SIGKILL');
      if (outage.startsWith('refused')) await world.s3Proxy.refuse();
      else world.s3Proxy.blackhole();
      try {
        const listenMs = await world.b.start();
        rows[`${label}: ms to listen`] = listenMs;
        const status = async (path: string) => (await world.ask(world.b, path))?.status;
        expect(await status('/healthz')).toBe(200);
        expect(await status('/query?limit=5')).toBe(200);
        const ready = await world.ask(world.b, '/readyz');
        expect(ready?.status).toBe(200);
        expect(await ready?.json()).toMatchObject({ status: 'degraded' });
        {
          // Refused is answered at once; a black-holed store once its request timeout (requestTimeoutMs, 2 s here, for each of the SDK's attempts) runs out.
          const upload = await world.ask(world.b, '/upload/imap/swe/l1a/2031/01/imap_swe_l1a_sci_20310101_20310101_v00-01.cdf');
          expect(upload?.status).toBe(503);
          expect(upload?.headers.get('retry-after')).toMatch(/^\d+$/);
          expect(upload?.headers.get('x-error-code')).toBe('SDC_STORE_UNAVAILABLE');
          rows[`${label}: upload answered`] = `${upload?.status} ${upload?.headers.get('x-error-code')} Retry-After ${upload?.headers.get('retry-after')}`;
        }
      } finally {
        await world.s3Proxy.resume();
      }
      // Back: uploads through the restarted instance are stored and findable.
      const before = world.acknowledged.size;
      for (let i = 0; i < 4; i++) await world.upload();
      expect(world.acknowledged.size).toBe(before + 4);
      expect(await world.unfindable(FINDABLE_WITHIN_MS)).toEqual([]);
      expect(world.instances.flatMap((i) => i.unexpectedExits)).toEqual([]);
      expect(world.answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    });
  }
});
