import { createHash, randomBytes } from 'node:crypto';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { partsUploaded } from '../helpers/parts-upload.js';
import { sleep, sql, useFaultWorld } from './fault-setup.js';

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

/**
 * Instances that die or start at the worst moment (docs/reliability.md, *Faults at scale*):
 * two `sdc serve` on RGW + PostgreSQL through proxies the test controls.
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`instance crashes: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  const setup = useFaultWorld('faults-instance-crashes');
  const { rows } = setup;

  /**
   * An upload in parts completed through instance B, which is SIGKILLed with the bytes under
   * their name and no record, as a crash at that instant leaves it: the record's INSERT stalls
   * (a trigger sleeping on this one name) until B is dead, then the trigger is made harmless.
   */
  async function completionKilledBeforeRecord(name: string) {
    if (!setup.world.b.alive) await setup.world.b.start();
    const path = `imap/swe/l1a/2030/01/${name}`;
    const bytes = randomBytes(256 * 1024);
    const { schema } = setup.world.schema;
    const fn = `"${schema}".stall_${name.slice(17, 25)}`;
    await sql(`create function ${fn}() returns trigger language plpgsql as $$ begin perform pg_sleep(120); return new; end $$`);
    await sql(`create trigger stall_${name.slice(17, 25)} before insert on "${schema}".files for each row when (new.file_path = '${path}') execute function ${fn}()`);

    const { uploadId, parts } = await partsUploaded(setup.world.b.url, path, bytes, bytes.length);
    const complete = (on: typeof setup.world.a) =>
      fetch(`${on.url}/uploads/${path}?uploadId=${encodeURIComponent(uploadId)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ parts }),
        signal: AbortSignal.timeout(60_000),
      });
    const completion = complete(setup.world.b).then(
      (res) => res.status,
      () => 'no answer',
    );
    const stalled = async () =>
      (await sql(`select 1 from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [setup.world.applicationName])).rowCount! > 0;
    expect(await waitFor(stalled, 30_000), 'the record is being written').toBeDefined();
    const stored = await setup.world.rgw.client.send(new HeadObjectCommand({ Bucket: setup.world.bucket, Key: path })).then(
      () => true,
      () => false,
    );
    expect(stored, 'the bytes are under their name').toBe(true);

    await setup.world.b.kill('SIGKILL');
    // Replaced, not dropped: dropping would wait for the stalled INSERT's lock on the table.
    await sql(`create or replace function ${fn}() returns trigger language plpgsql as $$ begin return new; end $$`);
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [setup.world.applicationName]);
    const expected = { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    return { name, path, expected, completion: await completion, complete };
  }

  it('an upload in parts whose instance is SIGKILLed between the store joining it and its record is findable within 15 s; its completion sent again then answers 200', { timeout: 120_000 }, async () => {
    const { name, expected, completion, complete } = await completionKilledBeforeRecord('imap_swe_l1a_sci_20300101_20300101_v00-01.cdf');
    rows['upload in parts, instance killed before its record: completion answered'] = completion;

    const found = async () => {
      const res = await setup.world.ask(setup.world.a, `/query?file_path=${name}`);
      const records = res?.status === 200 ? ((await res.json()) as { sha256: string }[]) : [];
      return records.length === 1 && records[0]!.sha256 === expected.sha256;
    };
    const findableMs = await waitFor(found, FINDABLE_WITHIN_MS);
    rows['upload in parts, instance killed before its record: ms until findable'] = findableMs ?? `not within ${FINDABLE_WITHIN_MS}`;
    expect(findableMs, 'findable within 15 s of the kill, with nothing done by hand').toBeDefined();
    // The joined object the dead completion left is discarded once the record is in.
    const assemblies = async () => ((await setup.world.rgw.client.send(new ListObjectsV2Command({ Bucket: setup.world.bucket, Prefix: '.multipart/' }))).KeyCount ?? 0) === 0;
    expect(await waitFor(assemblies, 10_000), 'joined objects left').toBeDefined();

    // The client sends its completion again, to the instance still up, after the sweep recorded it.
    const again = await complete(setup.world.a);
    rows['upload in parts, instance killed before its record: completion sent again after the sweep'] = again.status;
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await again.json()).toEqual(expected);

    expect(setup.world.a.unexpectedExits).toEqual([]);
    await setup.world.b.start();
  });

  it('an upload in parts whose instance is SIGKILLed before its record: its completion sent again at once answers 200 with the record', { timeout: 120_000 }, async () => {
    const { expected, completion, complete, path } = await completionKilledBeforeRecord('imap_swe_l1a_sci_20300102_20300102_v00-01.cdf');
    expect(completion).toBe('no answer');
    // At once, before the sweep (it leaves a joined object younger than 5 s), and while the dead
    // instance's lease on the name lasts: the completion itself finds its bytes and records them.
    const started = Date.now();
    const again = await complete(setup.world.a);
    rows['upload in parts, instance killed before its record: completion sent again at once'] = `${again.status} in ${Date.now() - started} ms`;
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await again.json()).toEqual(expected);
    expect((await setup.world.ask(setup.world.a, `/query?file_path=${path.split('/').pop()}`).then((r) => r?.json())) as unknown[]).toMatchObject([{ sha256: expected.sha256 }]);
    const assemblies = async () => ((await setup.world.rgw.client.send(new ListObjectsV2Command({ Bucket: setup.world.bucket, Prefix: '.multipart/' }))).KeyCount ?? 0) === 0;
    expect(await waitFor(assemblies, 10_000), 'joined objects left').toBeDefined();
    expect(setup.world.a.unexpectedExits).toEqual([]);
    await setup.world.b.start();
  });

  for (const outage of ['refused (RGW stopped)', 'black-holed (unreachable)'] as const) {
    it(`an instance restarted while the store is ${outage}: listens, /healthz and queries 200, uploads 503 with Retry-After, and recovers`, { timeout: 120_000 }, async () => {
      const label = `restart while the store is ${outage.split(' ')[0]}`;
      await setup.world.b.kill('SIGKILL');
      if (outage.startsWith('refused')) await setup.world.s3Proxy.refuse();
      else setup.world.s3Proxy.blackhole();
      try {
        const listenMs = await setup.world.b.start();
        rows[`${label}: ms to listen`] = listenMs;
        const status = async (path: string) => (await setup.world.ask(setup.world.b, path))?.status;
        expect(await status('/healthz')).toBe(200);
        expect(await status('/query?limit=5')).toBe(200);
        const ready = await setup.world.ask(setup.world.b, '/readyz');
        expect(ready?.status).toBe(200);
        expect(await ready?.json()).toMatchObject({ status: 'degraded' });
        {
          // Refused is answered at once; a black-holed store once the short calls' deadline (operationTimeoutMs, 3 s) runs out.
          const upload = await setup.world.ask(setup.world.b, '/upload/imap/swe/l1a/2031/01/imap_swe_l1a_sci_20310101_20310101_v00-01.cdf');
          expect(upload?.status).toBe(503);
          expect(upload?.headers.get('retry-after')).toMatch(/^\d+$/);
          expect(upload?.headers.get('x-error-code')).toBe('SDC_STORE_UNAVAILABLE');
          rows[`${label}: upload answered`] = `${upload?.status} ${upload?.headers.get('x-error-code')} Retry-After ${upload?.headers.get('retry-after')}`;
        }
      } finally {
        await setup.world.s3Proxy.resume();
      }
      // Back: uploads through the restarted instance are stored and findable.
      const before = setup.world.acknowledged.size;
      for (let i = 0; i < 4; i++) await setup.world.upload();
      expect(setup.world.acknowledged.size).toBe(before + 4);
      expect(await setup.world.unfindable(FINDABLE_WITHIN_MS)).toEqual([]);
      expect(setup.world.instances.flatMap((i) => i.unexpectedExits)).toEqual([]);
      expect(setup.world.answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
    });
  }
});
