import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { startRgw, type RgwServer } from '../helpers/rgw.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { recordFigures } from '../reliability/figures.js';
import { Instance } from './fault-world.js';
import { sleep, sql } from './fault-setup.js';

/** What every route must answer within while the store is frozen (docs/reliability.md). */
const ANSWER_WITHIN_MS = 5_000;
/** How soon after the store's return an upload must go through again. */
const UPLOADS_BACK_WITHIN_MS = 10_000;

const day = (n: number) => new Date(Date.UTC(2035, 0, 1) + n * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
const pathOf = (n: number) => `imap/swe/l1a/${day(n).slice(0, 4)}/${day(n).slice(4, 6)}/imap_swe_l1a_sci_${day(n)}_${day(n)}_v00-01.cdf`;

/**
 * The store's faults seen by one `sdc serve` with the store's default timeouts (as an operator
 * runs it), reached through a proxy the test controls, without bucket notifications (the sweep
 * indexes): a store that freezes, RGW SIGSTOPped (the kernel still accepts connections, nothing
 * answers) or its port black-holed; one upload whose promotion fails among others
 * (docs/reliability.md, *Faults at scale*).
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`store faults, one instance: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let rgw: RgwServer;
  let schema: TestSchema;
  let proxy: TcpProxy;
  let instance: Instance;
  let home: string;
  let next = 1;
  const rows: Record<string, string | number> = {};

  /** One upload: an address, then the PUT; the PUT's status, or the address's answer when refused. */
  async function upload(path: string): Promise<number> {
    const res = await fetch(`${instance.url}/upload/${path}`, { signal: AbortSignal.timeout(20_000) });
    if (res.status !== 200) return (await res.arrayBuffer(), res.status);
    const put = await fetch((await res.json()) as string, { method: 'PUT', body: randomBytes(1024), headers: { 'Content-Type': '' }, signal: AbortSignal.timeout(20_000) });
    await put.arrayBuffer();
    return put.status;
  }

  beforeAll(async () => {
    rgw = await startRgw();
    const bucket = await rgw.createBucket();
    schema = testSchema();
    const endpoint = new URL(rgw.endpoint);
    proxy = new TcpProxy(endpoint.hostname, Number(endpoint.port));
    await proxy.start();
    home = await mkdtemp(join(tmpdir(), 'sdc-frozen-'));
    instance = new Instance('A', await freePort(), {
      PATH: process.env.PATH,
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
      SDC_HOME: home,
      SDC_CATALOG: schema.url,
      // The store's default timeouts: what an operator who set none gets.
      SDC_STORE: rgw.storeUrl(bucket).replace(encodeURIComponent(rgw.endpoint), encodeURIComponent(`http://${proxy.url}`)),
      SDC_SWEEP_INTERVAL: '2',
      SDC_RATE_LIMIT: '0',
      SDC_LOG_LEVEL: 'info',
      SDC_REQUIRE_KEYS: 'false',
    });
    await instance.start();
    expect(await upload(pathOf(0))).toBe(200);
    // Indexed (by the sweep: no notifications here) before the store freezes: its download needs only the catalog.
    const name = pathOf(0).slice(pathOf(0).lastIndexOf('/') + 1);
    for (let waited = 0; waited < 30_000; waited += 250) {
      const res = await fetch(`${instance.url}/query?file_path=${name}`);
      if (((await res.json()) as unknown[]).length === 1) break;
      await sleep(250);
    }
  }, 120_000);

  afterAll(async () => {
    recordFigures('faults-store', rows);
    await instance?.kill('SIGTERM');
    await proxy?.stop();
    await rgw?.stop();
    await schema?.drop();
    if (home) await rm(home, { recursive: true, force: true });
  }, 60_000);

  const freezes = {
    'RGW frozen (SIGSTOP)': { freeze: () => rgw.signalGateway('SIGSTOP'), thaw: () => rgw.signalGateway('SIGCONT') },
    'the store port black-holed (accepts, never answers)': { freeze: async () => proxy.blackhole(), thaw: () => proxy.resume() },
  };
  for (const [label, { freeze, thaw }] of Object.entries(freezes)) {
    it(`${label}: every route answers within 5 s, those that need the store 503 with Retry-After; uploads work again within seconds`, { timeout: 120_000 }, async () => {
      const indexed = pathOf(0);
      const fresh = pathOf(next++);
      // What each route must answer while the store says nothing (on a shared store /readyz says "degraded", 200).
      const expected: [string, RequestInit, number][] = [
        ['/healthz', {}, 200],
        ['/version', {}, 200],
        ['/metrics', {}, 200],
        ['/readyz', {}, 200],
        ['/query?limit=5', {}, 200],
        ['/coverage', {}, 200],
        ['/changes', {}, 200],
        [`/download/${indexed}`, {}, 302],
        [`/upload/${fresh}`, {}, 503],
        [`/uploads/${fresh}?size=10000000`, { method: 'POST' }, 503],
        [`/download/${fresh}`, {}, 503],
      ];
      // Keep-alive connections to the store exist before the freeze, as in service.
      expect(await upload(pathOf(next++))).toBe(200);
      await freeze();
      const seen: string[] = [];
      try {
        await sleep(300);
        for (const [route, init, status] of expected) {
          const started = Date.now();
          const res = await fetch(`${instance.url}${route}`, { ...init, redirect: 'manual', signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
          const ms = Date.now() - started;
          await res?.arrayBuffer();
          const answer = `${route.split('?')[0]!.split('/').slice(0, 2).join('/')} ${res?.status ?? 'no answer'} ${ms} ms`;
          seen.push(answer);
          expect(res?.status, answer).toBe(status);
          expect(ms, answer).toBeLessThan(ANSWER_WITHIN_MS);
          if (status === 503) {
            expect(res!.headers.get('x-error-code'), answer).toBe('SDC_STORE_UNAVAILABLE');
            expect(res!.headers.get('retry-after'), answer).toMatch(/^\d+$/);
          }
        }
      } finally {
        rows[`${label}: answers`] = seen.join('; ');
        await thaw();
      }
      const thawed = Date.now();
      let status = 0;
      while (Date.now() - thawed < UPLOADS_BACK_WITHIN_MS + 20_000 && status !== 200) {
        status = await upload(fresh);
        if (status !== 200) await sleep(250);
      }
      const backMs = Date.now() - thawed;
      rows[`${label}: ms from the store's return to an acknowledged upload`] = backMs;
      expect(status).toBe(200);
      expect(backMs).toBeLessThan(UPLOADS_BACK_WITHIN_MS);
      expect(instance.unexpectedExits).toEqual([]);
    });
  }

  it('the sweep goes on past an upload whose promotion fails: the uploads behind it are indexed, no pass stops', { timeout: 120_000 }, async () => {
    const failing = pathOf(100);
    const others = Array.from({ length: 7 }, (_, i) => pathOf(101 + i));
    const { schema: name } = schema;
    // The failing upload's record is refused by the catalog (not an outage): its promotion fails every pass.
    await sql(`create function "${name}".refuse_one() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`);
    await sql(`create trigger refuse_one before insert on "${name}".files for each row when (new.file_path = '${failing}') execute function "${name}".refuse_one()`);
    const logsFrom = instance.logs.length;
    try {
      // First in key order, so every pass meets it before the others.
      for (const path of [failing, ...others]) expect(await upload(path)).toBe(200);
      const findable = async (path: string) => {
        const res = await fetch(`${instance.url}/query?file_path=${path.slice(path.lastIndexOf('/') + 1)}`);
        return ((await res.json()) as unknown[]).length === 1;
      };
      const started = Date.now();
      let missing = others;
      while (missing.length > 0 && Date.now() - started < 20_000) {
        const still: string[] = [];
        for (const path of missing) if (!(await findable(path))) still.push(path);
        missing = still;
        if (missing.length > 0) await sleep(250);
      }
      rows['one failed promotion among 8: the others indexed, ms'] = Date.now() - started;
      expect(missing, 'uploads behind the failing one').toEqual([]);
      const messages = instance.logs.slice(logsFrom).map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages.filter((m) => m.startsWith('sweep failed')), 'passes stopped by one upload').toEqual([]);
      expect(messages.some((m) => m.startsWith('sweep: this upload could not be promoted'))).toBe(true);
      expect(await findable(failing)).toBe(false);
    } finally {
      await sql(`drop trigger refuse_one on "${name}".files`);
    }
    // Once the catalog takes it, the next pass indexes it too.
    for (let waited = 0; waited < 20_000; waited += 250) {
      const res = await fetch(`${instance.url}/query?file_path=${failing.slice(failing.lastIndexOf('/') + 1)}`);
      if (((await res.json()) as unknown[]).length === 1) return;
      await sleep(250);
    }
    throw new Error('the failed upload was not indexed once the catalog took it');
  });
});
