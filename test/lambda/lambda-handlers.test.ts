import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyResult } from 'aws-lambda';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { buildApp } from '../../src/http/app.js';
import { loadServerConfig } from '../../src/config.js';
import { makeApiHandler, NOT_STARTED, type ApiEvent } from '../../src/lambda/api-handler.js';
import { buildLambdaApp } from '../../src/lambda/lambda-app.js';
import { cachedContext } from '../../src/lambda/lambda-context.js';
import { makeIngestHandler } from '../../src/lambda/s3-ingest-handler.js';
import { makeKeysHandler } from '../../src/lambda/keys-handler.js';
import { makeReconcileHandler } from '../../src/lambda/reconcile-handler.js';
import { AUDIT_TIME_MARGIN_MS, makeAuditHandler } from '../../src/lambda/audit-handler.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import type { ServiceContext } from '../../src/service/index.js';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';
import { putBytes } from '../contract/store-contract.js';
import { eventBridgeEvent, s3Notification, v1Event, v2Event, withV1Headers } from './lambda-events.js';
import { CSV_HEADER } from '../../src/wire/record.js';

const NAME = 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const PATH = `imap/swe/l1a/2024/01/${NAME}`;
const BYTES = Buffer.from('science bytes\n'.repeat(500));
const CONFIG = loadServerConfig({}, { logLevel: 'silent' });

// The handlers on real adapters: S3 over HTTP (Ceph RGW) and an SQLite catalog. AWS itself is
// replaced only by the events, shaped as API Gateway, S3 and EventBridge send them.
describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'AWS Lambda handlers' : `AWS Lambda handlers: ${S3_SKIPPED}`, () => {
  let s3: S3TestServer;
  let dir: string;
  let ctx: ServiceContext;
  let store: S3ObjectStore;
  let api: (event: ApiEvent) => Promise<APIGatewayProxyResult>;
  let ingest: ReturnType<typeof makeIngestHandler>;
  /** The key the upload address named: S3 uploads wait under a staging key until the ingest promotes them. */
  let stagingKey: string;

  beforeAll(async () => {
    s3 = await startS3TestServer();
    dir = await mkdtemp(join(tmpdir(), 'sdc-lambda-'));
    store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    const catalog = await openSqliteCatalog(join(dir, 'catalog.db'));
    ctx = { mission: IMAP_MISSION, catalog, store, uploadTtl: 3600, downloadTtl: 86400, log: pino({ level: 'silent' }) };
    const handle = makeApiHandler(cachedContext(() => buildLambdaApp({ ctx, config: CONFIG })));
    api = (event) => handle(event) as Promise<APIGatewayProxyResult>;
    ingest = makeIngestHandler(() => Promise.resolve(ctx));
  });
  afterAll(async () => {
    await ctx?.catalog.close();
    store?.close();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('hands out an upload address through an HTTP API (v2) event', async () => {
    const result = await api(v2Event(`/upload/${PATH}`));
    expect(result).toMatchObject({ statusCode: 200, isBase64Encoded: false, headers: { 'content-type': 'application/json; charset=utf-8' } });
    const address = JSON.parse(result.body) as string;
    expect(address).toContain(`${s3.endpoint}/${s3.bucket}/.staging/${PATH}/`);
    stagingKey = decodeURIComponent(new URL(address).pathname.slice(`/${s3.bucket}/`.length));
    expect((await putBytes(address, BYTES)).status).toBe(200);
  });

  it('indexes the stored object from the S3 notification, once, with its URL-encoded key decoded', async () => {
    expect(JSON.parse((await api(v1Event('/query', { instrument: ['swe'] }))).body)).toEqual([]);
    // S3 announces the staging key, encoded as form data; MinIO also encodes the slashes.
    expect(await ingest(s3Notification(stagingKey.replaceAll('/', '%2F')))).toEqual({ indexed: [PATH], exists: [], skipped: [], absent: [], refused: [], deferred: [], ignored: 0 });
    expect(await ingest(eventBridgeEvent(PATH))).toMatchObject({ indexed: [], exists: [PATH] });
  });

  it('answers a query through a REST API (v1) event with the records and the spec headers', async () => {
    const result = await api(v1Event('/query', { instrument: ['swe'], start_date: ['20240101'], version: ['v00-01'] }));
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' });
    expect(JSON.parse(result.body)).toMatchObject([
      { file_path: PATH, instrument: 'swe', size: BYTES.length, sha256: createHash('sha256').update(BYTES).digest('hex') },
    ]);
  });

  it('pages a query with a Link to the next page at the address the client called, and answers CSV on Accept', async () => {
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: PATH.replace('v00-01', 'v00-02'), Body: 'v2' }));
    await ingest(s3Notification(PATH.replace('v00-01', 'v00-02')));
    const page = await api(v2Event('/query', 'instrument=swe&limit=1', 'prod'));
    expect(page.statusCode).toBe(200);
    expect(page.headers).toMatchObject({ 'x-total-count': '2' });
    expect(page.headers!.link).toMatch(/^<https:\/\/xyz789abcd\.execute-api\.us-west-2\.amazonaws\.com\/prod\/query\?instrument=swe&limit=1&cursor=[^>]+>; rel="next"$/);
    const csv = await api(withV1Headers(v1Event('/query', { instrument: ['swe'] }), { Accept: 'text/csv' }));
    expect(csv.headers!['content-type']).toBe('text/csv; charset=utf-8');
    expect(`${csv.body.split('\r\n')[0]}\r\n`).toBe(CSV_HEADER);
  });

  it('redirects a download through a v2 event on a named stage to the signed address of the bytes', async () => {
    const result = await api(v2Event(`/download/${NAME}`, '', 'prod'));
    expect(result.statusCode).toBe(302);
    const location = result.headers!.location as string;
    expect(result.headers).toMatchObject({ 'content-type': 'text/html' });
    expect(JSON.parse(result.body)).toEqual({ download_url: location });
    const got = await fetch(location);
    expect(Buffer.from(await got.arrayBuffer()).equals(BYTES)).toBe(true);
  });

  it('indexes from an EventBridge event, and skips a key that breaks the naming rules', async () => {
    const other = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: other, Body: 'mag' }));
    expect(await ingest(eventBridgeEvent(other))).toMatchObject({ indexed: [other] });

    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'imap/mag/l1b/2024/03/field notes.cdf', Body: 'x' }));
    expect(await ingest(s3Notification('imap/mag/l1b/2024/03/field+notes.cdf'))).toMatchObject({ skipped: ['imap/mag/l1b/2024/03/field notes.cdf'] });
    expect(await ingest(s3Notification('imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v09-00.cdf'))).toMatchObject({
      absent: ['imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v09-00.cdf'],
    });
    expect(await ingest(s3Notification(other, 'ObjectRemoved:Delete'))).toMatchObject({ indexed: [], ignored: 1 });
    expect(await ingest({ hello: 'world' })).toMatchObject({ error: expect.stringContaining('Expected an S3 event notification') });
  });

  it('answers bad input with the same 4xx messages as the HTTP server', async () => {
    const app: FastifyInstance = await buildApp({ ctx });
    try {
      const cases: [ApiEvent, string][] = [
        [v1Event('/query', { instrument: ['swe', 'mag'] }), '/query?instrument=swe&instrument=mag'],
        [v2Event('/query', 'colour=red'), '/query?colour=red'],
        [v2Event('/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_2024_20240105_v00-01.cdf'), '/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_2024_20240105_v00-01.cdf'],
        [v1Event(`/upload/${PATH}`), `/upload/${PATH}`],
        [v1Event('/download/imap/swe/l1a/'), '/download/imap/swe/l1a/'],
        [v2Event(`/download/${NAME.replace('v00-01', 'v00-09')}`), `/download/${NAME.replace('v00-01', 'v00-09')}`],
        [v2Event('/query', 'instrument=swe'), '/query?instrument=swe'],
        [v2Event(`/upload/science/${PATH}`), `/upload/science/${PATH}`],
        [v1Event('/v0/upload/science/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v0-01.cdf'), '/v0/upload/science/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v0-01.cdf'],
        [v2Event('/v0/query', 'instrument=swe'), '/v0/query?instrument=swe'],
        [v2Event('/v0/download/imap/swe/'), '/v0/download/imap/swe/'],
        [v2Event('/coverage', 'instrument=swe'), '/coverage?instrument=swe'],
        [v2Event('/coverage', 'limit=3'), '/coverage?limit=3'],
      ];
      for (const [event, url] of cases) {
        const lambda = await api(event);
        const http = await app.inject({ method: 'GET', url });
        expect({ status: lambda.statusCode, type: lambda.headers!['content-type'], body: lambda.body }, url).toEqual({
          status: http.statusCode,
          type: http.headers['content-type'],
          body: http.body,
        });
      }
      expect((await api(v2Event('/nowhere'))).statusCode).toBe(404);
      expect((await api(v1Event(`/upload/${PATH}`, {}, 'DELETE'))).statusCode).toBe(405);
    } finally {
      await app.close();
    }
  });

  it('reconciles on schedule: indexes an object stored without an event, names a record whose object is gone', async () => {
    const reconcile = makeReconcileHandler(() => Promise.resolve(ctx));
    const lost = 'imap/hit/l1a/2024/02/imap_hit_l1a_sci_20240201_20240201_v00-01.cdf';
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: lost, Body: 'no event came' }));
    await store.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: PATH.replace('v00-01', 'v00-02') }));
    expect(await reconcile()).toEqual({ indexed: 1, refused: 0, deferred: 0, skipped: 1, refusedLinks: 0, missing: 1, firstMissing: [PATH.replace('v00-01', 'v00-02')] });
    expect(JSON.parse((await api(v2Event('/query', 'instrument=hit'))).body)).toMatchObject([{ file_path: lost }]);
  });

  it('audits on schedule within the time the function has: fails naming a missing file, whose download is refused', async () => {
    const audit = makeAuditHandler(() => Promise.resolve(ctx));
    const gone = PATH.replace('v00-01', 'v00-02');
    // Less time left than the margin: nothing is read, nothing recorded.
    expect(await audit(undefined, { getRemainingTimeInMillis: () => AUDIT_TIME_MARGIN_MS - 1 })).toMatchObject({ checked: 0, stoppedAtLimit: true });
    await expect(audit({ rateMBps: 100 }, { getRemainingTimeInMillis: () => 600_000 })).rejects.toThrow(new RegExp(`missing 1: missing: ${gone}$`));
    expect(await ctx.catalog.get(gone)).toMatchObject({ fixity: 'missing' });
    const refused = await api(v2Event(`/download/${gone}`));
    expect(refused).toMatchObject({ statusCode: 409, headers: { 'x-error-code': 'SDC_FIXITY_FAILED' } });
    // A prefix without damage: the run answers its report.
    expect(await audit({ path: 'imap/hit/' }, { getRemainingTimeInMillis: () => 600_000 })).toMatchObject({ checked: 1, ok: 1, failures: [] });
  });

  it('creates, lists and revokes API keys for the operator who invokes the keys function', async () => {
    const keys = makeKeysHandler(() => Promise.resolve(ctx));
    const created = await keys({ create: 'swe-pipeline' });
    expect(created).toMatchObject({ created: 'swe-pipeline', key: expect.any(String) });
    expect(await ctx.catalog.keys().check((created as { key: string }).key)).toMatchObject({ kind: 'valid', name: 'swe-pipeline' });
    expect(await keys({ list: true })).toMatchObject({ keys: [{ name: 'swe-pipeline', role: 'uploader' }] });
    const curator = await keys({ create: 'archive-curator', role: 'curator' });
    expect(await ctx.catalog.keys().check((curator as { key: string }).key)).toMatchObject({ kind: 'valid', role: 'curator' });
    expect(await keys({ create: 'ops', role: 'admin' })).toEqual({ error: 'role must be one of uploader, curator, reader (default uploader).' });
    expect(await keys({ revoke: 'swe-pipeline' })).toEqual({ revoked: 'swe-pipeline', result: 'revoked' });
    expect(await keys({ create: 'bad name!' })).toMatchObject({ error: expect.any(String) });
    expect(await keys({} as never)).toMatchObject({ error: expect.stringContaining('Expected') });
  });

  it('answers 503 in words, never a bare 502 or 504, when the container cannot start or a request outruns the function', async () => {
    const broken = makeApiHandler(() => Promise.reject(new Error('SDC_CATALOG names no database')));
    const refused = (await broken(v2Event('/query'))) as APIGatewayProxyResult;
    expect(refused).toMatchObject({ statusCode: 503, headers: { 'retry-after': '5' }, body: NOT_STARTED });

    // A real Fastify app with a route that never answers, and a function with 2 s left.
    const stuck = Fastify();
    stuck.get('/query', () => new Promise(() => {}));
    await stuck.ready();
    const slow = makeApiHandler(() => Promise.resolve(stuck));
    const started = Date.now();
    const late = (await slow(v2Event('/query'), { getRemainingTimeInMillis: () => 2000, awsRequestId: 'r' })) as APIGatewayProxyResult;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(late.statusCode).toBe(503);
    expect(late.body).toMatch(/ran out of the time .* a page at a time/);
    await stuck.close();
  });

  it('refuses, with a 400 that says how to page it, a query too large for one Lambda answer', async () => {
    const small = makeApiHandler(cachedContext(() => buildLambdaApp({ ctx, config: CONFIG, maxBodyBytes: 200 })));
    const result = (await small(v2Event('/query', ''))) as APIGatewayProxyResult;
    expect(result.statusCode).toBe(400);
    expect(result.headers).toMatchObject({ 'access-control-allow-origin': '*' });
    expect(result.headers!.link).toBeUndefined();
    expect(JSON.parse(result.body)).toMatch(/a page at a time: add limit=1000 and follow the Link header/);
    expect((await api(v2Event('/query', 'instrument=mag'))).statusCode).toBe(200);
  });
});
