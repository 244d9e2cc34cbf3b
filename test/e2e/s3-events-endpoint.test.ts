import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { fixture } from '../lambda/lambda-events.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const TOKEN = 'events-endpoint-secret';
const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';

// POST /events/s3 on a real server (S3 store on Ceph RGW, SQLite catalog), as a webhook calls it.
describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'POST /events/s3' : `POST /events/s3: ${S3_SKIPPED}`, () => {
  let s3: S3TestServer;
  let server: TestServer;
  let closed: TestServer | undefined;
  const post = (body: unknown, authorization?: string, url = server.url) =>
    fetch(`${url}/events/s3`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(authorization ? { Authorization: authorization } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    s3 = await startS3TestServer();
    server = await startTestServer({ store: s3.storeUrl, eventsToken: TOKEN });
  });
  afterAll(async () => {
    await server?.stop();
    await closed?.stop();
    await s3?.stop();
  });

  it('says which credential is wrong: 401 without one, 403 with the wrong one, 403 when disabled', async () => {
    const event = fixture('s3-notification-put.json');
    const none = await post(event);
    expect(none.status).toBe(401);
    expect(await none.text()).toBe('Missing credentials: send the header Authorization: Bearer <SDC_EVENTS_TOKEN> (or, for stores that cannot send headers, ?token=<SDC_EVENTS_TOKEN>).');
    const wrong = await post(event, 'Bearer not-the-token');
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('does not match');
    expect((await post(event, `Basic ${TOKEN}`)).status).toBe(401);
    // The credentials are checked first, whatever the body.
    expect((await post('{"Records": [', `Bearer wrong`)).status).toBe(403);
    expect((await post('{"Records": [')).status).toBe(401);

    // Stores that cannot send a header (Ceph RGW's push-endpoint) put the token in the URL.
    const inUrl = (token: string) => fetch(`${server.url}/events/s3?token=${token}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Event": "s3:TestEvent"}' });
    expect((await inUrl('not-the-token')).status).toBe(403);
    expect((await inUrl('')).status).toBe(401);
    const accepted = await inUrl(TOKEN);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ indexed: [], ignored: 1 });

    closed = await startTestServer({ store: s3.storeUrl });
    const disabled = await post(event, `Bearer ${TOKEN}`, closed.url);
    expect(disabled.status).toBe(403);
    expect(await disabled.text()).toContain('start it with SDC_EVENTS_TOKEN');
  });

  it('indexes the announced object, once, and reports what it did', async () => {
    const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: PATH, Body: 'bytes' }));
    store.close();

    const first = await post(fixture('s3-notification-put.json'), `Bearer ${TOKEN}`);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ indexed: [PATH], exists: [], skipped: [], absent: [], refused: [], deferred: [], ignored: 0 });
    const again = await post(fixture('eventbridge-object-created.json'), `bearer ${TOKEN}`);
    expect(await again.json()).toMatchObject({ indexed: [], exists: [PATH] });

    const records = (await (await fetch(`${server.url}/query?file_path=${PATH}`)).json()) as { size: number }[];
    expect(records).toMatchObject([{ file_path: PATH, size: 5 }]);
  });

  it("leaves a promotion's own write to that promotion while it holds the name (RGW's event carries the metadata); indexes it otherwise", async () => {
    const path = PATH.replace('_sci_', '_promoted_');
    const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    const ingestionDate = '2026-11-28T20:00:00.000Z';
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: path, Body: 'promoted', Metadata: { 'ingestion-date': ingestionDate } }));
    store.close();
    const event = (metadata: { key: string; val: string }[]) => ({
      Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: s3.bucket }, object: { key: path, size: 8, metadata } } }],
    });
    const promoted = event([{ key: 'x-amz-meta-ingestion-date', val: ingestionDate }]);
    const leases = server.ctx.catalog.leases();
    expect(await leases.acquire(path, 'a-promoter', 60_000)).toBe(true);
    // Its promotion records it (or the sweep, should it crash): the event adds nothing.
    expect(await (await post(promoted, `Bearer ${TOKEN}`)).json()).toMatchObject({ indexed: [], exists: [path] });
    expect(await (await fetch(`${server.url}/query?file_path=${path}`)).json()).toEqual([]);
    // Without the promotion's metadata (a write straight to the store), indexed as ever.
    const direct = await (await post(event([]), `Bearer ${TOKEN}`)).json();
    await leases.release(path, 'a-promoter');
    expect(direct).toMatchObject({ indexed: [path] });
    const records = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { ingestion_date: string }[];
    expect(records).toMatchObject([{ file_path: path, size: 8, ingestion_date: ingestionDate }]);
    expect(await (await post(promoted, `Bearer ${TOKEN}`)).json()).toMatchObject({ indexed: [], exists: [path] });
  });

  it('answers a late event of an upload promoted already with one HEAD; a late loser is still settled', async () => {
    const path = PATH.replace('_sci_', '_late_');
    const store = server.ctx.store as S3ObjectStore;
    const stage = async (body: string, id: string) => {
      const stagingKey = `.staging/${path}/${id.repeat(24)}`;
      await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: stagingKey, Body: body }));
      return stagingKey;
    };
    const lateEvent = (key: string) => ({
      Records: [{ eventName: 'ObjectCreated:Put', eventTime: new Date(Date.now() - 60_000).toISOString(), s3: { bucket: { name: s3.bucket }, object: { key, size: 5 } } }],
    });
    const first = await stage('first', 'a');
    // A request for the name promotes it (as the sweep would, 5 s after its PUT) before its event comes.
    expect((await fetch(`${server.url}/download/${path}`, { redirect: 'manual' })).status).toBe(302);
    // Counted at the client's HTTP handler: middleware added now would not be seen, the client
    // resolves each command's stack once (cacheMiddleware; src/store/s3/s3-call-signals.ts).
    const handle = vi.spyOn(store.client.config.requestHandler, 'handle');
    try {
      expect(await (await post(lateEvent(first), `Bearer ${TOKEN}`)).json()).toMatchObject({ exists: [path], indexed: [], refused: [] });
      expect(handle.mock.calls.map(([request]) => (request as { method: string }).method)).toEqual(['HEAD']);
      // Another upload of the name, announced as late: the promotion settles it, as ever.
      const loser = await stage('other', 'b');
      expect(await (await post(lateEvent(loser), `Bearer ${TOKEN}`)).json()).toMatchObject({ refused: [path] });
      await expect(store.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: loser }))).rejects.toMatchObject({ name: 'NotFound' });
    } finally {
      handle.mockRestore();
    }
    const records = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { size: number }[];
    expect(records).toMatchObject([{ file_path: path, size: 5 }]);
  });

  it('answers a body that is no S3 event with 400 and the shape expected', async () => {
    const odd = await post({ Message: 'hello' }, `Bearer ${TOKEN}`);
    expect(odd.status).toBe(400);
    expect(await odd.text()).toContain('Expected an S3 event notification');
    const broken = await post('{"Records": [', `Bearer ${TOKEN}`);
    expect(broken.status).toBe(400);
    expect((await post('[1, 2]', `Bearer ${TOKEN}`)).status).toBe(400);
  });
});
