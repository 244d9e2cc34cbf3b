import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../helpers/backends.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { SDC_BIN } from '../helpers/child-server.js';
import { recordFigures } from '../reliability/figures.js';
import { FaultWorld } from './fault-world.js';
import { sleep } from './fault-setup.js';
import { query, ReplicatedClusters } from './replicated-clusters.js';

const run = promisify(execFile);
/** How soon after the switch the service must answer again (issue: 30 s). */
const RESUMES_WITHIN_MS = 30_000;
const SCHEMA = 'sdc_failover';

/**
 * A managed database's failover (docs/deploy.md, *Database failover*): a primary and a
 * synchronous streaming standby the test makes, behind the fault suite's TCP proxy; two
 * instances on RGW take uploads, withdrawals and releases; the primary stops, the standby is
 * promoted and the proxy moves to it (as the managed name moves) in the middle of the load. SWE
 * L1A is the team's until a release, so a release sets its files' release numbers.
 */
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`a database failover: ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let clusters: ReplicatedClusters;
  let world: FaultWorld;
  let curatorKey: string;
  let missionDir: string;
  const rows: Record<string, string | number> = {};

  beforeAll(async () => {
    clusters = await ReplicatedClusters.start();
    missionDir = await mkdtemp(join(tmpdir(), 'sdc-failover-mission-'));
    const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { instrument: ['swe'], data_level: ['l1a'] }, access: 'team' }] } };
    await writeFile(join(missionDir, 'mission.json'), JSON.stringify(mission));
    world = await FaultWorld.start(clusters.schema(SCHEMA), { SDC_MISSION_CONFIG: join(missionDir, 'mission.json') });
    const home = await mkdtemp(join(tmpdir(), 'sdc-failover-keys-'));
    try {
      const created = await run(process.execPath, [SDC_BIN, 'keys', 'create', 'failover-curator', '--role', 'curator'], {
        env: { PATH: process.env.PATH, SDC_HOME: home, SDC_CATALOG: clusters.primary.url(SCHEMA) },
      });
      curatorKey = created.stdout.trim().split('\n').pop()!.trim();
      // Once a key exists uploads need one; a curator's may call every upload route (docs/trust.md).
      world.apiKey = curatorKey;
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }, 180_000);

  afterAll(async () => {
    recordFigures('faults-database-failover', rows);
    await world?.stop();
    await clusters?.stop();
    if (missionDir) await rm(missionDir, { recursive: true, force: true });
  }, 60_000);

  it('the standby promoted and the proxy moved to it mid-load: no process dies, 503 + Retry-After meanwhile, back within 30 s, no acknowledged upload, withdrawal or release lost', { timeout: 180_000 }, async () => {
    // Files to withdraw and to release during the load (two a release): uploaded and indexed first.
    for (let i = 0; i < 24; i++) await world.upload();
    expect(await world.unfindable(30_000)).toEqual([]);
    const toWithdraw = [...world.acknowledged].slice(0, 12);
    const toRelease = [...world.acknowledged].slice(12);
    const withdrawn: string[] = [];
    const released: { number: number; paths: string[] }[] = [];
    const answersBefore = world.answers.length;

    let switchedAt = 0;
    let resumedMs: number | undefined;
    let faultDone = false;
    const fault = (async () => {
      await sleep(2_000);
      await clusters.failOver();
      world.pgProxy.retarget('127.0.0.1', clusters.standby.port);
      switchedAt = Date.now();
      // Back: both instances answer a query and hand out an upload address again.
      const probe = (n: number) => `/upload/imap/swe/l1a/2040/01/imap_swe_l1a_sci_204001${String(n).padStart(2, '0')}_204001${String(n).padStart(2, '0')}_v00-01.cdf`;
      for (let n = 1; Date.now() - switchedAt < RESUMES_WITHIN_MS + 30_000; n++) {
        const answers = await Promise.all(world.instances.flatMap((i) => [world.ask(i, '/query?limit=1'), world.ask(i, probe(n))]));
        await Promise.all(answers.map((a) => a?.arrayBuffer()));
        if (answers.every((a) => a?.status === 200)) {
          resumedMs = Date.now() - switchedAt;
          break;
        }
        await sleep(250);
      }
      await sleep(2_000);
    })().finally(() => (faultDone = true));
    const withdrawals = (async () => {
      for (let n = 0; !faultDone && n < toWithdraw.length; n++) {
        const path = toWithdraw[n]!;
        for (let attempt = 0; attempt < 80 && !faultDone; attempt++) {
          const res = await world.ask(world.instances[(n + attempt) % 2]!, `/withdraw/${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ reason: 'failover test' }),
          });
          await res?.arrayBuffer();
          // 409: an earlier try whose answer was lost had withdrawn it.
          if (res?.status === 200 || res?.status === 409) {
            if (res.status === 200) withdrawn.push(path);
            break;
          }
          await sleep(250);
        }
        await sleep(300);
      }
    })();
    const releases = (async () => {
      for (let n = 0; !faultDone && n < toRelease.length / 2; n++) {
        const paths = toRelease.slice(2 * n, 2 * n + 2);
        for (let attempt = 0; attempt < 80 && !faultDone; attempt++) {
          const res = await world.ask(world.instances[(n + attempt) % 2]!, '/releases', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ title: `failover release ${n}`, files: paths }),
          });
          // 200: an earlier try whose answer was lost had made it (docs/api.md "Releases").
          if (res?.status === 201 || res?.status === 200) {
            released.push({ number: ((await res.json()) as { release: number }).release, paths });
            break;
          }
          await res?.arrayBuffer();
          await sleep(250);
        }
        await sleep(500);
      }
    })();
    await Promise.all([world.uploadsDuring(fault), withdrawals, releases, fault]);

    const answers = world.answers.slice(answersBefore);
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    // A withdrawn file leaves queries (docs/api.md, *Withdrawn files*): those are checked below, as tombstones.
    for (const path of withdrawn) world.acknowledged.delete(path);
    const missing = await world.unfindable(15_000);
    const onNewPrimary = await query(clusters.standby.url(), `select file_path, status from "${SCHEMA}".files where file_path = any($1)`, [withdrawn]);
    // Each acknowledged release: its row, and its files carrying its number.
    const releasedPaths = released.flatMap((r) => r.paths);
    const releaseRows = await query(clusters.standby.url(), `select number, file_count::int as file_count from "${SCHEMA}".releases`);
    const releaseMarks = await query(clusters.standby.url(), `select file_path, release from "${SCHEMA}".files where file_path = any($1)`, [releasedPaths]);
    const releasesMissing = released.filter(
      (r) => !releaseRows.some((row) => Number(row.number) === r.number && row.file_count === 2) || r.paths.some((p) => !releaseMarks.some((m) => m.file_path === p && Number(m.release) === r.number)),
    );
    const before = toWithdraw.length + toRelease.length;
    rows['failover: uploads acknowledged (before, during)'] = `${before}, ${world.acknowledged.size + withdrawn.length - before}`;
    rows['failover: withdrawals acknowledged'] = withdrawn.length;
    rows['failover: releases acknowledged (files)'] = `${released.length} (${releasedPaths.length})`;
    rows['failover: acknowledged releases not on the new primary (or files without their number)'] = releasesMissing.length;
    rows['failover: answers by status'] = [...byStatus].sort().map(([s, n]) => `${s}×${n}`).join(' ');
    rows['failover: ms from the switch until both instances answer'] = resumedMs ?? 'not within 60 s';
    rows['failover: acknowledged uploads not on the new primary'] = missing.length;
    rows['failover: acknowledged withdrawals not on the new primary'] = withdrawn.length - onNewPrimary.filter((r) => r.status === 'withdrawn').length;

    expect(world.instances.flatMap((i) => i.unexpectedExits), 'processes that ended by themselves').toEqual([]);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503), 'answers other than 503 among the 5xx').toEqual([]);
    expect(answers.filter((a) => a.status === 503 && !a.retryAfter), '503 without Retry-After').toEqual([]);
    expect(resumedMs, 'both instances answer again').toBeLessThan(RESUMES_WITHIN_MS);
    expect(missing, 'acknowledged uploads on the new primary').toEqual([]);
    expect(withdrawn.length, 'withdrawals went on around the switch').toBeGreaterThan(0);
    expect(onNewPrimary.filter((r) => r.status === 'withdrawn').map((r) => r.file_path).sort(), 'acknowledged withdrawals on the new primary').toEqual([...withdrawn].sort());
    expect(released.length, 'releases went on around the switch').toBeGreaterThan(0);
    expect(releasesMissing, 'acknowledged releases, and their files\' numbers, on the new primary').toEqual([]);
  });
});
