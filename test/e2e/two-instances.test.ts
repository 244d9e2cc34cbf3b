import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putBytes } from '../contract/store-contract.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

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
});
