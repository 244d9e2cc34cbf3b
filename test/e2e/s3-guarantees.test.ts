import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeIngestHandler } from '../../src/lambda/s3-ingest-handler.js';
import { reconcile } from '../../src/service/index.js';
import { testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const TOKEN = 's3-guarantees-token';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const pathOf = (descriptor: string, day = '05') => `imap/swe/l1a/2024/01/imap_swe_l1a_${descriptor}_202401${day}_202401${day}_v00-01.cdf`;

/** The mission's Python client: PUT with only `Content-Type: ""` (requests, data=...), no conditional header. */
function missionPut(address: string, bytes: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(address, { method: 'PUT', headers: { 'Content-Type': '', 'Content-Length': bytes.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

// What the S3 deployment promises, shown on a real S3 server (Ceph RGW) with PostgreSQL:
// no client can replace a stored file, racing uploads end with one file and one record that
// describes its bytes, the uploader travels, and bucket notifications index without reconcile.
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  let backends: ProductionBackends;
  let server: TestServer;
  /** A second bucket, without notifications, and its own service and schema. */
  let quiet: { bucket: string; schema: TestSchema; server: TestServer };
  const address = async (path: string, headers: Record<string, string> = {}, on = server) => {
    const res = await fetch(`${on.url}/upload/${path}`, { headers });
    expect(res.status).toBe(200);
    return (await res.json()) as string;
  };
  const records = async (path: string) => (await (await fetch(`${server.url}/query?file_path=${path.slice(path.lastIndexOf('/') + 1)}`)).json()) as Record<string, unknown>[];
  const keys = async (prefix: string, bucket = backends.bucket) =>
    ((await backends.rgw.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key);
  const stored = async (key: string, bucket = backends.bucket) =>
    Buffer.from(await (await backends.rgw.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray());

  beforeAll(async () => {
    backends = await startProductionBackends();
    server = await startTestServer({ ...backends.settings, eventsToken: TOKEN });
    await backends.notify(server.url, TOKEN);
    const bucket = await backends.rgw.createBucket();
    const schema = testSchema();
    quiet = { bucket, schema, server: await startTestServer({ store: backends.rgw.storeUrl(bucket), catalog: schema.url }) };
  });
  afterAll(async () => {
    await server?.stop();
    await quiet?.server.stop();
    await quiet?.schema.drop();
    await backends?.stop();
  });

  it('gives the mission client an address it can PUT to, without a conditional header, and indexes the PUT at once', async () => {
    const path = pathOf('plain');
    const bytes = Buffer.from('plain science bytes\n'.repeat(100));
    const put = await address(path);
    expect(new URL(put).searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect(await missionPut(put, bytes)).toBe(200);
    // RGW answers the PUT after POST /events/s3 has promoted and recorded it.
    expect(await records(path)).toMatchObject([{ file_path: path, size: bytes.length, sha256: sha256(bytes) }]);
    expect((await stored(path)).equals(bytes)).toBe(true);
    expect(await keys('.staging/')).toEqual([]);
  });

  it('never lets a later PUT replace a stored file, whatever the client sends', async () => {
    const path = pathOf('later');
    const [first, second] = await Promise.all([address(path), address(path)]);
    expect(await missionPut(first, Buffer.from('first'))).toBe(200);
    // The second address was handed out before the first PUT; its PUT lands under its own staging key.
    expect(await missionPut(second, Buffer.from('second, longer'))).toBe(200);
    expect(await missionPut(first, Buffer.from('first, replayed'))).toBe(200);
    expect((await stored(path)).toString()).toBe('first');
    expect(await records(path)).toMatchObject([{ size: 5, sha256: sha256(Buffer.from('first')) }]);
    expect(await keys('.staging/')).toEqual([]);
    expect((await fetch(`${server.url}/upload/${path}`)).status).toBe(409);
  });

  it('ends 20 racing PUTs of one name with one object and one record that describes its bytes', async () => {
    const path = pathOf('race');
    const bodies = Array.from({ length: 20 }, (_, i) => Buffer.from(`racer ${i} `.repeat(1000 + i * 37)));
    const addresses = await Promise.all(bodies.map(() => address(path)));
    const statuses = await Promise.all(addresses.map((a, i) => missionPut(a, bodies[i]!)));
    expect(statuses).toEqual(bodies.map(() => 200));

    expect(await keys(path)).toEqual([path]);
    expect(await keys('.staging/')).toEqual([]);
    const bytes = await stored(path);
    const found = await records(path);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    expect(bodies.some((b) => b.equals(bytes))).toBe(true);
  });

  it('indexes a file PUT straight into the bucket with the AWS SDK, without a reconcile', async () => {
    const path = pathOf('direct', '06');
    await backends.rgw.client.send(new PutObjectCommand({ Bucket: backends.bucket, Key: path, Body: 'put by the operator' }));
    expect(await records(path)).toMatchObject([{ file_path: path, size: 19, sha256: sha256(Buffer.from('put by the operator')) }]);
  });

  it('promotes, on reconcile, uploads whose notification never came: the first PUT wins, the later one is refused', async () => {
    const path = pathOf('unannounced', '07');
    const [first, second] = await Promise.all([address(path, {}, quiet.server), address(path, {}, quiet.server)]);
    expect(await missionPut(first, Buffer.from('first to arrive'))).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // S3 times are to the second
    expect(await missionPut(second, Buffer.from('second'))).toBe(200);
    expect(await quiet.server.ctx.catalog.get(path)).toBeUndefined();

    const report = await reconcile(quiet.server.ctx);
    expect(report).toMatchObject({ indexed: 1, refused: 1, missing: [] });
    expect((await stored(path, quiet.bucket)).toString()).toBe('first to arrive');
    expect(await quiet.server.ctx.catalog.get(path)).toMatchObject({ size: 15, sha256: sha256(Buffer.from('first to arrive')) });
    expect(await keys('.staging/', quiet.bucket)).toEqual([]);
  });

  it('indexes, through the Lambda ingest handler, the event RGW sent for a staged upload (captured)', async () => {
    // test/fixtures/rgw-notification-staged-put.json: the body RGW 16.2 POSTed for a presigned
    // upload (uploader swe-pipeline), pretty-printed. Its staging object is put back in place
    // here, in the bucket without notifications, so that only the handler indexes it.
    const event = JSON.parse(readFileSync(new URL('../fixtures/rgw-notification-staged-put.json', import.meta.url), 'utf8')) as {
      Records: { s3: { object: { key: string; size: number } } }[];
    };
    const stagingKey = event.Records[0]!.s3.object.key;
    const path = stagingKey.slice('.staging/'.length, stagingKey.lastIndexOf('/'));
    const bytes = Buffer.from('science bytes\n');
    expect(bytes.length).toBe(event.Records[0]!.s3.object.size);
    await backends.rgw.client.send(new PutObjectCommand({ Bucket: quiet.bucket, Key: stagingKey, Body: bytes, Metadata: { uploader: 'swe-pipeline' } }));
    const handle = makeIngestHandler(() => Promise.resolve(quiet.server.ctx));
    expect(await handle(event)).toEqual({ indexed: [path], exists: [], skipped: [], absent: [], refused: [], deferred: [], ignored: 0 });
    expect(await handle(event)).toMatchObject({ indexed: [], exists: [path] });
    expect(await quiet.server.ctx.catalog.get(path)).toMatchObject({ size: bytes.length, sha256: sha256(bytes), uploader: 'swe-pipeline' });
    expect(await keys('.staging/', quiet.bucket)).toEqual([]);
  });

  // Last: once a key exists, every upload needs one.
  it('keeps the uploader in the record: signed into the address as x-amz-meta-uploader, read back at ingest', async () => {
    const path = pathOf('keyed', '08');
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    const put = await address(path, { 'X-API-Key': key });
    expect(new URL(put).searchParams.get('x-amz-meta-uploader')).toBe('swe-pipeline');
    const forged = new URL(put);
    forged.searchParams.set('x-amz-meta-uploader', 'someone-else');
    expect(await missionPut(forged.toString(), Buffer.from('forged'))).toBe(403);
    expect(await missionPut(put, Buffer.from('keyed bytes'))).toBe(200);
    const [record] = (await records(path)) as { ingestion_date: string }[];
    expect([record]).toMatchObject([{ file_path: path, uploader: 'swe-pipeline', size: 11 }]);
    // The ingestion date travels with the object too (set at promotion), so a rebuild keeps it.
    const head = await backends.rgw.client.send(new HeadObjectCommand({ Bucket: backends.bucket, Key: path }));
    expect(head.Metadata).toEqual({ uploader: 'swe-pipeline', 'ingestion-date': record!.ingestion_date });
  });
});
