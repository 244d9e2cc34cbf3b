import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { freePort } from '../helpers/free-port.js';
import { runCli } from '../helpers/run-cli.js';
import { Instance, type FaultWorld } from './fault-world.js';
import { sql, useFaultWorld } from './fault-setup.js';
import { cutAndRelease, hold, held, letGo, schemaOf, waitFor } from './held-statements.js';

/** SWE L1A is the team's until a release (docs/api.md "Who sees what"): the fault world's uploads are all SWE L1A. */
const TEAM_MISSION = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { instrument: ['swe'], data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'hidden' } };

async function missionDir(): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-release-faults-'));
  const file = join(dir, 'mission.json');
  await writeFile(file, JSON.stringify(TEAM_MISSION));
  return { dir, file };
}

const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A release's traces in the catalog, read in one statement (one snapshot): its rows, manifest, files marked, entries logged. */
async function releaseState(world: FaultWorld, title: string, paths: readonly string[]) {
  const s = schemaOf(world);
  const { rows } = await sql(
    `select (select count(*)::int from ${s}.releases where title = $1) as releases,
            (select count(*)::int from ${s}.release_files where release in (select number from ${s}.releases where title = $1)) as manifest,
            (select count(*)::int from ${s}.files where file_path = any($2) and release in (select number from ${s}.releases where title = $1)) as marked,
            (select count(*)::int from ${s}.changes where file_path = any($2) and change = 'released') as logged`,
    [title, paths],
  );
  return rows[0] as { releases: number; manifest: number; marked: number; logged: number };
}

/** A retraction's traces: the release marked, its files still its own, 'retracted' entries. */
async function retractionState(world: FaultWorld, number: number, paths: readonly string[]) {
  const s = schemaOf(world);
  const { rows } = await sql(
    `select (select count(*)::int from ${s}.releases where number = $1 and retracted_date is not null) as retracted,
            (select count(*)::int from ${s}.files where file_path = any($2) and release = $1) as still_its,
            (select count(*)::int from ${s}.changes where file_path = any($2) and change = 'retracted') as logged`,
    [number, paths],
  );
  return rows[0] as { retracted: number; still_its: number; logged: number };
}

/**
 * Releases under faults (docs/reliability.md, "The lifecycle under faults"): the catalog's
 * connections cut in the middle of a release's writes (its manifest, its row, its files' dates,
 * its 'released' entries) and of a retraction's; a release whose answer the client lost after
 * its commit, asked again; an instance SIGKILLed right after a release's 201. Nothing is ever
 * half-written, the caller gets 503 with Retry-After, a retry succeeds, and asking again answers
 * what was done (docs/api.md "Releases", *A repeated request*).
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`releases under faults: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let mission: { dir: string; file: string };
  const setup = useFaultWorld('faults-releases', async () => {
    mission = await missionDir();
    return { SDC_MISSION_CONFIG: mission.file };
  });
  const { rows } = setup;
  /** Uploaded and indexed before the cases, two for each release. */
  const files: string[] = [];
  /** Releases the cut cases made on their retry, with their files: the retraction cases retract them. */
  const made: { number: number; paths: string[] }[] = [];
  const two = () => files.splice(0, 2);

  beforeAll(async () => {
    const catalog = await openCatalog(setup.world.schema.url);
    try {
      setup.world.apiKey = (await catalog.keys().create('release-curator', 'curator')).key;
    } finally {
      await catalog.close();
    }
    for (let i = 0; i < 12; i++) await setup.world.upload();
    files.push(...[...setup.world.acknowledged].sort());
    expect(files).toHaveLength(12);
    expect(await setup.world.unfindable(30_000)).toEqual([]);
  }, 180_000);
  afterAll(async () => {
    if (mission) await rm(mission.dir, { recursive: true, force: true });
  });

  /** The answer to a cut request: 503, Retry-After, a catalog code. */
  async function expectUnavailable(res: Response | undefined, row: string): Promise<void> {
    const text = await res?.text();
    rows[row] = `${res?.status} ${res?.headers.get('x-error-code')} Retry-After ${res?.headers.get('retry-after')}`;
    expect(res?.status, text).toBe(503);
    expect(res?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(res?.headers.get('x-error-code')).toMatch(/^SDC_CATALOG_/);
  }

  for (const [label, table, event, when] of [
    ['its manifest\'s INSERT', 'release_files', 'insert', (p: string) => `new.file_path = '${p}'`],
    ['the release row\'s INSERT', 'releases', 'insert', (_p: string, title: string) => `new.title = '${title}'`],
    ['its files\' UPDATE', 'files', 'update', (p: string) => `new.file_path = '${p}' and new.release is distinct from old.release`],
    ['its change-log append (the \'released\' entries, last)', 'changes', 'insert', (p: string) => `new.file_path = '${p}' and new.change = 'released'`],
  ] as const) {
    it(`catalog connections cut in ${label}: nothing written, 503 with Retry-After; the retry makes it, asking again answers it`, { timeout: 120_000 }, async () => {
      const paths = two();
      const title = `cut in ${table} ${event}`;
      const body = { title, files: paths };
      await hold(setup.world, table, event, when(paths[0]!, title));
      const answer = setup.world.ask(setup.world.a, '/releases', json(body));
      await held(setup.world);
      await cutAndRelease(setup.world, table);
      await expectUnavailable(await answer, `release cut in ${label}: answer`);
      expect(await releaseState(setup.world, title, paths), 'nothing half-written').toEqual({ releases: 0, manifest: 0, marked: 0, logged: 0 });

      const retried = await setup.world.ask(setup.world.b, '/releases', json(body));
      expect(retried?.status).toBe(201);
      const created = (await retried!.json()) as { release: number };
      expect(await releaseState(setup.world, title, paths)).toEqual({ releases: 1, manifest: 2, marked: 2, logged: 2 });
      // Its answer lost too: the same request again answers the release made, and makes none.
      const again = await setup.world.ask(setup.world.a, '/releases', json(body));
      expect(again?.status).toBe(200);
      expect(await again!.json()).toEqual(created);
      expect(await releaseState(setup.world, title, paths)).toEqual({ releases: 1, manifest: 2, marked: 2, logged: 2 });
      made.push({ number: created.release, paths });
      expect(setup.world.instances.flatMap((i) => i.unexpectedExits)).toEqual([]);
    });
  }

  it('a release whose answer was lost after its commit (the client gave up), asked again: 200 with that release, no second one', { timeout: 120_000 }, async () => {
    const paths = two();
    const title = 'answer lost after the commit';
    const body = { title, files: paths };
    // Its last statement held 3 s: the client gives up meanwhile, the server commits after.
    await hold(setup.world, 'changes', 'insert', `new.file_path = '${paths[0]}' and new.change = 'released'`, 3);
    const gaveUp = new AbortController();
    const first = fetch(`${setup.world.a.url}/releases`, { ...json(body), headers: { 'content-type': 'application/json', 'x-api-key': setup.world.apiKey! }, signal: gaveUp.signal }).catch((err: unknown) => err);
    await held(setup.world);
    gaveUp.abort();
    expect(await first).toBeInstanceOf(Error);
    await waitFor('the first request committed', async () => (await releaseState(setup.world, title, paths)).releases === 1);
    await letGo(setup.world, 'changes');
    const number = Number((await sql(`select number from ${schemaOf(setup.world)}.releases where title = $1`, [title])).rows[0].number);

    const again = await setup.world.ask(setup.world.b, '/releases', json(body));
    const answer = (await again?.json()) as { release: number };
    rows['release asked again after its answer was lost: answer'] = `${again?.status}, release ${answer.release} (made ${number})`;
    expect(again?.status).toBe(200);
    expect(again?.headers.get('location')).toMatch(new RegExp(`/releases/${number}$`));
    expect(answer).toMatchObject({ release: number, files: 2 });
    expect(await releaseState(setup.world, title, paths)).toEqual({ releases: 1, manifest: 2, marked: 2, logged: 2 });
    // Another title is another release: only an identical request is a repeat.
    const other = await setup.world.ask(setup.world.b, '/releases', json({ ...body, title: `${title}, second edition` }));
    expect(other?.status).toBe(201);
  });

  for (const [label, table, event, when] of [
    ['its mark on the release\'s row (UPDATE)', 'releases', 'update', (n: number) => `new.number = ${n} and new.retracted_date is not null`],
    ['its files\' UPDATE', 'files', 'update', (_n: number, p: string) => `new.file_path = '${p}' and new.release is distinct from old.release`],
    ['its change-log append (the \'retracted\' entries, last)', 'changes', 'insert', (_n: number, p: string) => `new.file_path = '${p}' and new.change = 'retracted'`],
  ] as const) {
    it(`catalog connections cut in a retraction, in ${label}: nothing written, 503; the retry retracts, asking again answers it`, { timeout: 120_000 }, async () => {
      const { number, paths } = made.shift()!;
      const reason = `cut in ${table} ${event}`;
      await hold(setup.world, table, event, when(number, paths[0]!));
      const answer = setup.world.ask(setup.world.a, `/releases/${number}/retract`, json({ reason }));
      await held(setup.world);
      await cutAndRelease(setup.world, table);
      await expectUnavailable(await answer, `retraction cut in ${label}: answer`);
      expect(await retractionState(setup.world, number, paths), 'nothing half-written').toEqual({ retracted: 0, still_its: 2, logged: 0 });

      const retried = await setup.world.ask(setup.world.b, `/releases/${number}/retract`, json({ reason }));
      expect(retried?.status).toBe(200);
      const done = (await retried!.json()) as Record<string, unknown>;
      expect(done).toMatchObject({ release: number, status: 'retracted', retracted_reason: reason });
      expect(await retractionState(setup.world, number, paths)).toEqual({ retracted: 1, still_its: 0, logged: 2 });
      // Its answer lost too: the same curator's same retraction answers it again; another reason is refused.
      const again = await setup.world.ask(setup.world.a, `/releases/${number}/retract`, json({ reason }));
      expect(again?.status).toBe(200);
      expect(await again!.json()).toEqual(done);
      const otherReason = await setup.world.ask(setup.world.a, `/releases/${number}/retract`, json({ reason: 'another reason' }));
      expect(otherReason?.status).toBe(409);
      expect(await retractionState(setup.world, number, paths)).toEqual({ retracted: 1, still_its: 0, logged: 2 });
    });
  }

  it('an instance SIGKILLed right after a release\'s 201: the release holds after its restart (PostgreSQL)', { timeout: 120_000 }, async () => {
    const paths = two();
    const title = 'killed after the answer';
    const res = await setup.world.ask(setup.world.a, '/releases', json({ title, files: paths }));
    expect(res?.status).toBe(201);
    const { release } = (await res!.json()) as { release: number };
    await setup.world.a.kill('SIGKILL');
    await setup.world.a.start();
    // Anonymous: published, its files public.
    const shown = await fetch(`${setup.world.a.url}/releases/${release}`);
    expect(shown.status).toBe(200);
    expect(await shown.json()).toMatchObject({ release, status: 'published', files: paths.sort().map((file_path) => ({ file_path })) });
    const found = (await (await fetch(`${setup.world.a.url}/query?release=${release}`)).json()) as { file_path: string }[];
    expect(found.map((r) => r.file_path).sort()).toEqual(paths.sort());
    expect(await releaseState(setup.world, title, paths)).toEqual({ releases: 1, manifest: 2, marked: 2, logged: 2 });
    rows['instance SIGKILLed after a release\'s 201 (PostgreSQL): release after restart'] = `${shown.status}, ${found.length} files public`;
  });
});

/** The same kill on the embedded default (SQLite and the local store): one `sdc serve`. */
describe('releases under faults: SQLite', () => {
  it('an instance SIGKILLed right after a release\'s 201: the release holds after its restart', { timeout: 120_000 }, async () => {
    const { dir, file } = await missionDir();
    const instance = new Instance('S', await freePort(), { PATH: process.env.PATH, SDC_HOME: dir, SDC_RATE_LIMIT: '0', SDC_MISSION_CONFIG: file });
    try {
      await instance.start();
      const created = await runCli(['keys', 'create', 'sqlite-curator', '--role', 'curator'], { env: { SDC_HOME: dir } });
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim().split('\n').pop()!.trim();
      const paths = [1, 2].map((d) => `imap/swe/l1a/2024/01/imap_swe_l1a_sci_2024010${d}_2024010${d}_v00-01.cdf`);
      for (const path of paths) {
        const address = await fetch(`${instance.url}/upload/${path}`, { headers: { 'x-api-key': key } });
        expect(address.status).toBe(200);
        expect((await fetch((await address.json()) as string, { method: 'PUT', body: randomBytes(2048) })).status).toBe(200);
      }
      expect(await (await fetch(`${instance.url}/query?instrument=swe`)).json(), 'the team\'s before the release').toEqual([]);
      const res = await fetch(`${instance.url}/releases`, { ...json({ title: 'killed after the answer', files: paths }), headers: { 'content-type': 'application/json', 'x-api-key': key } });
      expect(res.status).toBe(201);
      const { release } = (await res.json()) as { release: number };
      await instance.kill('SIGKILL');
      await instance.start();
      const shown = await fetch(`${instance.url}/releases/${release}`);
      expect(shown.status).toBe(200);
      expect(await shown.json()).toMatchObject({ release, status: 'published', file_count: 2 });
      const found = (await (await fetch(`${instance.url}/query?instrument=swe`)).json()) as { file_path: string; release: number }[];
      expect(found.map((r) => [r.file_path, r.release])).toEqual(paths.map((p) => [p, release]));
      const changes = (await (await fetch(`${instance.url}/changes`)).json()) as { change: string; file_path: string }[];
      expect(changes.filter((e) => e.change === 'released').map((e) => e.file_path).sort()).toEqual(paths);
      expect(instance.unexpectedExits).toEqual([]);
    } finally {
      await instance.kill('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
