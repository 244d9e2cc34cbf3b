import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { runCli, startCli } from '../helpers/run-cli.js';
import { Instance, type FaultWorld } from './fault-world.js';
import { sleep, sql, useFaultWorld } from './fault-setup.js';
import { cutAndRelease as cutAndReleaseIn, hold, held, waitFor } from './held-statements.js';

const withdrawal = (reason: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason }) });

/** Uploads `bytes` under `path` as a client does (address from the instance, PUT to the store); the PUT's status. */
async function uploadBytes(world: FaultWorld, instance: Instance, path: string, bytes: Buffer): Promise<number> {
  const res = await world.ask(instance, `/upload/${path}`);
  expect(res?.status, `upload address for ${path}`).toBe(200);
  const put = await fetch((await res!.json()) as string, { method: 'PUT', body: bytes, headers: { 'Content-Type': '' } });
  await put.arrayBuffer();
  return put.status;
}

/**
 * The lifecycle's writes under faults (docs/reliability.md, "The lifecycle under faults"): the
 * catalog's connections cut (through the suite's TCP proxy) in the middle of a withdrawal, of its
 * change-log append and of an audit's record; an instance SIGKILLed right after a withdrawal's
 * 200; `sdc audit` SIGKILLed in the middle of a file. Each statement to cut is held by a trigger
 * that sleeps on one name, so the cut lands inside it; the sleeping backend is then ended, as
 * PostgreSQL ends one whose client is gone.
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`the lifecycle under faults: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  const setup = useFaultWorld('faults-lifecycle');
  const { rows } = setup;
  let curatorKey: string;
  /** Uploaded and indexed before the cases, one for each to withdraw. */
  const files: string[] = [];

  beforeAll(async () => {
    const catalog = await openCatalog(setup.world.schema.url);
    try {
      curatorKey = (await catalog.keys().create('lifecycle-curator', 'curator')).key;
    } finally {
      await catalog.close();
    }
    // Once a key exists uploads need one; a curator's may call every upload route (docs/trust.md).
    setup.world.apiKey = curatorKey;
    for (let i = 0; i < 6; i++) await setup.world.upload();
    files.push(...[...setup.world.acknowledged].sort());
    expect(files).toHaveLength(6);
    expect(await setup.world.unfindable(30_000)).toEqual([]);
  }, 120_000);

  const schema = () => `"${setup.world.schema.schema}"`;

  const stall = (table: string, event: string, when: string) => hold(setup.world, table, event, when);
  const stalled = () => held(setup.world);
  const cutAndRelease = (table: string) => cutAndReleaseIn(setup.world, table);

  async function stateOf(path: string): Promise<{ status: string | null; withdrawnEntries: number }> {
    const file = await sql(`select status from ${schema()}.files where file_path = $1`, [path]);
    const entries = await sql(`select count(*)::int as n from ${schema()}.changes where file_path = $1 and change = 'withdrawn'`, [path]);
    return { status: (file.rows[0] as { status: string | null }).status, withdrawnEntries: (entries.rows[0] as { n: number }).n };
  }

  for (const [label, table, event, when] of [
    ['the withdrawal\'s UPDATE', 'files', 'update', "new.status = 'withdrawn'"],
    ['its change-log append (inside its COMMIT, the log\'s lock held)', 'changes', 'insert', "new.change = 'withdrawn'"],
  ] as const) {
    it(`catalog connections cut in ${label}: nothing written, 503 with Retry-After, the retry withdraws, a second retry answers the same`, { timeout: 120_000 }, async () => {
      const path = files.shift()!;
      await stall(table, event, `new.file_path = '${path}' and ${when}`);
      const answer = setup.world.ask(setup.world.a, `/withdraw/${path}`, withdrawal('cut mid-withdrawal'));
      await stalled();
      await cutAndRelease(table);
      const res = await answer;
      const text = await res?.text();
      rows[`withdrawal cut in ${label}: answer`] = `${res?.status} ${res?.headers.get('x-error-code')} Retry-After ${res?.headers.get('retry-after')}`;
      expect(res?.status, text).toBe(503);
      expect(res?.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res?.headers.get('x-error-code')).toMatch(/^SDC_CATALOG_/);
      expect(await stateOf(path), 'nothing half-written').toEqual({ status: null, withdrawnEntries: 0 });

      const retried = await setup.world.ask(setup.world.b, `/withdraw/${path}`, withdrawal('cut mid-withdrawal'));
      expect(retried?.status).toBe(200);
      const record = (await retried!.json()) as Record<string, unknown>;
      expect(record).toMatchObject({ file_path: path, status: 'withdrawn', withdrawn_reason: 'cut mid-withdrawal' });
      // Its answer lost too: the same request again answers what happened.
      const again = await setup.world.ask(setup.world.a, `/withdraw/${path}`, withdrawal('cut mid-withdrawal'));
      expect(again?.status).toBe(200);
      expect(await again!.json()).toEqual(record);
      expect(await stateOf(path)).toEqual({ status: 'withdrawn', withdrawnEntries: 1 });
      expect(setup.world.instances.flatMap((i) => i.unexpectedExits)).toEqual([]);
    });
  }

  it('catalog connections cut in an upload\'s change-log append (its created entry): never a record without its entry; indexed once the catalog answers, with one entry', { timeout: 120_000 }, async () => {
    const path = 'imap/hit/l1a/2029/07/imap_hit_l1a_sci_20290701_20290701_v00-01.cdf';
    // One statement, one snapshot: the record and its entry come together or not at all.
    const together = async () =>
      (await sql(`select (select count(*)::int from ${schema()}.files where file_path = $1) as records, (select count(*)::int from ${schema()}.changes where file_path = $1 and change = 'created') as entries`, [path])).rows[0] as { records: number; entries: number };
    await stall('changes', 'insert', `new.file_path = '${path}' and new.change = 'created'`);
    expect(await uploadBytes(setup.world, setup.world.b, path, randomBytes(1500))).toBe(200);
    await stalled();
    await cutAndRelease('changes');
    const cutAt = Date.now();
    const after = await together();
    expect(after.records, 'no record without its created entry').toBe(after.entries);
    // The staged upload stays until its record commits: the notification's retry or a sweep indexes it.
    await waitFor('the upload indexed after the cut', async () => (await together()).records === 1);
    rows['upload\'s created entry cut: indexed after the cut (ms)'] = Date.now() - cutAt;
    expect(await together()).toEqual({ records: 1, entries: 1 });
    expect(setup.world.instances.flatMap((i) => i.unexpectedExits)).toEqual([]);
  });

  it('an instance SIGKILLed right after a withdrawal\'s 200: the withdrawal holds after its restart (PostgreSQL)', { timeout: 120_000 }, async () => {
    const path = files.shift()!;
    const res = await setup.world.ask(setup.world.a, `/withdraw/${path}`, withdrawal('killed after the answer'));
    expect(res?.status).toBe(200);
    await setup.world.a.kill('SIGKILL');
    await setup.world.a.start();
    const download = await setup.world.ask(setup.world.a, `/download/${path}`, { redirect: 'manual' });
    expect(download?.status).toBe(410);
    expect(await stateOf(path)).toEqual({ status: 'withdrawn', withdrawnEntries: 1 });
    rows['instance SIGKILLed after a withdrawal\'s 200 (PostgreSQL): download after restart'] = download!.status;
  });

  /** `sdc audit` on the world's catalog (through the proxy, under its application name) and store. */
  function auditEnv(home: string): Record<string, string> {
    const catalogUrl = new URL(setup.world.schema.url);
    catalogUrl.host = setup.world.pgProxy.url;
    catalogUrl.searchParams.set('application_name', setup.world.applicationName);
    return {
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      SDC_HOME: home,
      SDC_CATALOG: catalogUrl.toString(),
      SDC_STORE: setup.world.rgw.storeUrl(setup.world.bucket),
    };
  }

  const verifiedDate = async (path: string) => (await sql(`select verified_date from ${schema()}.files where file_path = $1`, [path])).rows[0]?.verified_date as string | null;
  const noted = async () => (await sql(`select file_path from ${schema()}.audit_reads`)).rows.map((r: { file_path: string }) => r.file_path);

  it('catalog connections cut in an audit\'s record: exit 3, nothing flagged nor recorded; the next run checks that file first', { timeout: 180_000 }, async () => {
    const home = await mkdtemp(join(tmpdir(), 'sdc-lifecycle-audit-'));
    try {
      // The last archived file in path order: without the note it would be the last checked.
      const archived = (await sql(`select file_path from ${schema()}.files where status is null order by file_path`)).rows.map((r: { file_path: string }) => r.file_path);
      const path = archived.at(-1)!;
      await stall('files', 'update', `new.file_path = '${path}' and new.verified_date is distinct from old.verified_date`);
      const run = runCli(['audit', '--path', path], { env: auditEnv(home) });
      await stalled();
      await cutAndRelease('files');
      const cut = await run;
      rows['audit: catalog cut in its record: exit'] = String(cut.code);
      expect(cut.code, cut.stderr).toBe(3);
      expect(cut.stderr).toContain('no file was flagged for it');
      expect(await verifiedDate(path), 'nothing recorded').toBeNull();
      expect(await noted()).toEqual([path]);

      const next = await runCli(['audit'], { env: auditEnv(home) });
      expect(next.code, next.stderr).toBe(0);
      const dates = await Promise.all(archived.map(async (p) => ({ p, date: (await verifiedDate(p))! })));
      const first = dates.reduce((a, b) => (b.date < a.date ? b : a));
      expect(first.p, 'checked first').toBe(path);
      expect(await noted()).toEqual([]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('sdc audit SIGKILLed in the middle of a file: the next run checks that file first, before never-verified ones', { timeout: 180_000 }, async () => {
    const home = await mkdtemp(join(tmpdir(), 'sdc-lifecycle-audit-'));
    try {
      const big = 'imap/swe/l1a/2029/06/imap_swe_l1a_sci_20290601_20290601_v00-01.cdf';
      expect(await uploadBytes(setup.world, setup.world.b, big, randomBytes(4_000_000))).toBe(200);
      await waitFor('the large file indexed', async () => (await setup.world.ask(setup.world.b, `/query?file_path=${big.split('/').pop()}`).then((r) => r?.json() as Promise<unknown[]>))?.length === 1);
      // Every file but the large one verified already: the large one is the run's first.
      const killed = startCli(['audit', '--rate', '0.5'], { env: auditEnv(home) });
      await waitFor('the audit reading the large file', async () => (await noted()).includes(big));
      await sleep(500);
      await killed.stop('SIGKILL');
      expect(await verifiedDate(big), 'unrecorded').toBeNull();
      // A file never verified, before the large one in path order: without the note it would come first.
      const small = 'imap/hit/l1a/2029/06/imap_hit_l1a_sci_20290601_20290601_v00-01.cdf';
      expect(await uploadBytes(setup.world, setup.world.b, small, randomBytes(1000))).toBe(200);
      await waitFor('the small file indexed', async () => (await setup.world.ask(setup.world.b, `/query?file_path=${small.split('/').pop()}`).then((r) => r?.json() as Promise<unknown[]>))?.length === 1);

      const next = await runCli(['audit'], { env: auditEnv(home) });
      expect(next.code, next.stderr).toBe(0);
      const [bigDate, smallDate] = [await verifiedDate(big), await verifiedDate(small)];
      rows['audit SIGKILLed mid-file: next run checked it first'] = String(bigDate! < smallDate!);
      expect(bigDate! < smallDate!, `${big} at ${bigDate}, ${small} at ${smallDate}`).toBe(true);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

/** The same kill on the embedded default (SQLite and the local store): one `sdc serve`. */
describe('the lifecycle under faults: SQLite', () => {
  it('an instance SIGKILLed right after a withdrawal\'s 200: the withdrawal holds after its restart', { timeout: 120_000 }, async () => {
    const home = await mkdtemp(join(tmpdir(), 'sdc-lifecycle-sqlite-'));
    const instance = new Instance('S', await freePort(), { PATH: process.env.PATH, SDC_HOME: home, SDC_RATE_LIMIT: '0' });
    try {
      await instance.start();
      // The server made the catalog; a key made beside it is seen at once.
      const created = await runCli(['keys', 'create', 'sqlite-curator', '--role', 'curator'], { env: { SDC_HOME: home } });
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim().split('\n').pop()!.trim();
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240101_20240101_v00-01.cdf';
      const address = await fetch(`${instance.url}/upload/${path}`, { headers: { 'x-api-key': key } });
      expect(address.status).toBe(200);
      const put = await fetch((await address.json()) as string, { method: 'PUT', body: randomBytes(2048) });
      expect(put.status).toBe(200);
      const res = await fetch(`${instance.url}/withdraw/${path}`, { ...withdrawal('killed after the answer'), headers: { 'content-type': 'application/json', 'x-api-key': key } });
      expect(res.status).toBe(200);
      await instance.kill('SIGKILL');
      await instance.start();
      const download = await fetch(`${instance.url}/download/${path}`, { redirect: 'manual' });
      expect(download.status).toBe(410);
      const changes = (await (await fetch(`${instance.url}/changes`, { headers: { 'x-api-key': key } })).json()) as { changes?: { change: string; file_path: string }[] };
      expect(JSON.stringify(changes)).toContain('"withdrawn"');
      expect(instance.unexpectedExits).toEqual([]);
    } finally {
      await instance.kill('SIGTERM');
      await rm(home, { recursive: true, force: true });
    }
  });
});
