import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putBytes } from '../contract/store-contract.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { IMAP_MISSION } from '../../src/mission/index.js';

const TOKEN = 'two-instances-token';
const pathOf = (name: string) => `imap/hit/l1a/2024/02/${name}`;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Two `sdc serve` instances sharing one PostgreSQL schema and one S3 bucket, as behind a
// load balancer: whatever one does, the other sees; neither keeps state the other needs.
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  describe('two instances on one PostgreSQL and one S3', () => {
    let backends: ProductionBackends;
    let a: TestServer;
    let b: TestServer;

    beforeAll(async () => {
      backends = await startProductionBackends();
      [a, b] = await Promise.all([
        startTestServer({ ...backends.settings, eventsToken: TOKEN }),
        startTestServer({ ...backends.settings, eventsToken: TOKEN }),
      ]);
      // A bucket notification, set up only in the second test, will point at instance A only.
    });
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await backends?.stop();
    });

    it('indexes on the spot, on the other instance, an upload whose event never came', async () => {
      const name = 'imap_hit_l1a_sci_20240211_20240211_v00-01.cdf';
      const bytes = Buffer.from('no event for these bytes');
      const address = (await (await fetch(`${a.url}/upload/${pathOf(name)}`)).json()) as string;
      // PUT straight to S3 with no notification configured: only the on-the-spot indexing can find it.
      expect((await putBytes(address, bytes)).status).toBe(200);
      expect(await (await fetch(`${a.url}/query?file_path=${name}`)).json()).toEqual([]);

      const redirect = await fetch(`${b.url}/download/${pathOf(name)}`, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      expect(await (await fetch(`${a.url}/query?file_path=${name}`)).json()).toMatchObject([{ sha256: sha256(bytes) }]);
    });

    it('uploads through one and queries and downloads through the other', async () => {
      await backends.notify(a.url, TOKEN);
      const name = 'imap_hit_l1a_sci_20240210_20240210_v00-01.cdf';
      const bytes = Buffer.from('hit counts\n'.repeat(2000));
      const address = (await (await fetch(`${a.url}/upload/${pathOf(name)}`)).json()) as string;
      // RGW answers the PUT once instance A has taken its notification.
      expect((await putBytes(address, bytes)).status).toBe(200);

      const records = (await (await fetch(`${b.url}/query?instrument=hit&start_date=20240210&end_date=20240210`)).json()) as unknown[];
      expect(records).toMatchObject([{ file_path: pathOf(name), size: bytes.length, sha256: sha256(bytes) }]);
      const got = await fetch(`${b.url}/download/${name}`);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect((await fetch(`${b.url}/upload/${pathOf(name)}`)).status).toBe(409);
    });

    it('withdraws through one: the other answers 410, leaves it out of queries and latest at once (docs/api.md "Withdrawn files")', async () => {
      const name = 'imap_hit_l1a_sci_20240210_20240210_v00-01.cdf';
      const { key } = await a.ctx.catalog.keys().create('two-instances-curator', 'curator');
      const done = await fetch(`${a.url}/withdraw/${name}`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ reason: 'counts doubled' }),
      });
      expect(done.status).toBe(200);
      const gone = await fetch(`${b.url}/download/${name}`, { redirect: 'manual' });
      expect(gone.status).toBe(410);
      expect(await gone.text()).toContain('Reason: counts doubled');
      expect(await (await fetch(`${b.url}/query?instrument=hit&start_date=20240210&end_date=20240210`)).json()).toEqual([]);
      expect(await (await fetch(`${b.url}/query?instrument=hit&start_date=20240210&end_date=20240210&version=latest`)).json()).toEqual([]);
      expect(await (await fetch(`${b.url}/query?file_path=${name}&status=withdrawn`)).json()).toMatchObject([{ status: 'withdrawn', withdrawn_by: 'two-instances-curator' }]);
      expect((await fetch(`${b.url}/withdraw/${name}`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: '{"reason":"again"}' })).status).toBe(409);
    });
  });

  describe('two instances under an access policy: a release made through one is public at once through the other', () => {
    let backends: ProductionBackends;
    let a: TestServer;
    let b: TestServer;
    let dir: string;
    const TEAM = 'imap/hit/l1b/2024/02/imap_hit_l1b_sci_20240212_20240212_v00-01.cdf';

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sdc-two-policy-'));
      const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1b'] }, access: 'team' }], embargoedMetadata: 'hidden' } };
      await writeFile(join(dir, 'mission.json'), JSON.stringify(mission));
      backends = await startProductionBackends();
      const settings = { ...backends.settings, missionConfig: join(dir, 'mission.json') };
      [a, b] = await Promise.all([startTestServer(settings), startTestServer(settings)]);
    });
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await backends?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('releases through A: B answers its files, its manifest and its release at once; a retraction through B is seen by A', async () => {
      const address = (await (await fetch(`${a.url}/upload/${TEAM}`)).json()) as string;
      expect((await putBytes(address, Buffer.from('team bytes'))).status).toBe(200);
      // Indexed (a download through A indexes it on the spot), and the team's: hidden from B's anonymous callers.
      await fetch(`${a.url}/download/${TEAM}`, { redirect: 'manual', headers: { 'X-API-Key': (await a.ctx.catalog.keys().create('two-reader', 'reader')).key } });
      expect(await (await fetch(`${b.url}/query?data_level=l1b`)).json()).toEqual([]);
      const { key } = await a.ctx.catalog.keys().create('two-curator', 'curator');
      const made = await fetch(`${a.url}/releases`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'HIT L1B', files: [TEAM] }) });
      expect(made.status).toBe(201);
      const { release } = (await made.json()) as { release: number };
      expect(await (await fetch(`${b.url}/query?data_level=l1b`)).json()).toMatchObject([{ file_path: TEAM, release }]);
      expect((await fetch(`${b.url}/download/${TEAM}`, { redirect: 'manual' })).status).toBe(302);
      expect(await (await fetch(`${b.url}/releases/${release}`)).json()).toMatchObject({ release, status: 'published', files: [{ file_path: TEAM }] });
      const retract = (target: TestServer, reason = 'wrong table') =>
        fetch(`${target.url}/releases/${release}/retract`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ reason }) });
      expect((await retract(b)).status).toBe(200);
      // The same retraction again answers what was done (docs/api.md "Releases"); another reason is refused.
      expect((await retract(a)).status).toBe(200);
      expect((await retract(a, 'another reason')).status).toBe(409);
      expect(await (await fetch(`${a.url}/query?data_level=l1b`)).json()).toEqual([]);
    });
  });
});
