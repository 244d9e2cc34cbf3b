import { GetObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { copyPartSize, S3Staging } from '../../src/store/s3/s3-staging.js';
import { stagedUploadOf } from '../../src/store/s3/s3-staging-keys.js';
import { HAVE_RGW, NO_RGW, startRgw, type RgwServer } from '../helpers/rgw.js';
import { testStore } from './store-contract.js';

const signedHeaders = (address: string) => new URL(address).searchParams.get('X-Amz-SignedHeaders')?.split(';') ?? [];
const key = (descriptor: string) => `imap/mag/l1a/2024/01/imap_mag_l1a_${descriptor}_20240105_20240105_v00-01.cdf`;

/** The HTTP status S3 answered a command with. */
async function statusOf(send: Promise<unknown>): Promise<number> {
  try {
    await send;
    return 200;
  } catch (err) {
    if (err instanceof S3ServiceException) return err.$metadata.httpStatusCode ?? 0;
    throw err;
  }
}

// S3 over HTTP on Ceph's RADOS Gateway: a real S3 server that checks every signature,
// the expiry of presigned addresses and If-None-Match.
describe.skipIf(!HAVE_RGW)(HAVE_RGW ? 'S3 on radosgw' : NO_RGW, () => {
  let rgw: RgwServer;
  let bucket: string;
  testStore(
    's3 (radosgw)',
    async () => {
      rgw = await startRgw();
      bucket = await rgw.createBucket();
      const store = new S3ObjectStore(parseS3Url(rgw.storeUrl(bucket)));
      return {
        store,
        async dispose() {
          store.close();
          await rgw.stop();
        },
      };
    },
    (store) => {
      it('adds no checksum parameters to upload addresses, and signs the lifetime in', async () => {
        const address = await store().presignPut(key('plain'), 60);
        expect(signedHeaders(address)).not.toContain('content-type');
        expect(address).not.toMatch(/checksum/i);
        expect(new URL(address).searchParams.get('X-Amz-Expires')).toBe('60');
      });

      it('refuses a tampered address with 403, for PUT and GET', async () => {
        const k = key('tamper');
        const put = await store().presignPut(k, 60);
        const flip = (address: string) => {
          const url = new URL(address);
          const signature = url.searchParams.get('X-Amz-Signature')!;
          url.searchParams.set('X-Amz-Signature', (signature[0] === '0' ? '1' : '0') + signature.slice(1));
          return url.toString();
        };
        expect((await fetch(flip(put), { method: 'PUT', body: 'x', headers: { 'Content-Type': '' } })).status).toBe(403);
        // Another key under the same signature.
        const moved = put.replace('_tamper_', '_tampex_');
        expect((await fetch(moved, { method: 'PUT', body: 'x', headers: { 'Content-Type': '' } })).status).toBe(403);
        await rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: 'stored' }));
        const get = await store().presignGet(k, 60);
        expect((await fetch(get)).status).toBe(200);
        expect((await fetch(flip(get))).status).toBe(403);
        // A longer lifetime than was signed.
        expect((await fetch(get.replace('X-Amz-Expires=60', 'X-Amz-Expires=6000'))).status).toBe(403);
      });

      it('refuses an expired address with 403', async () => {
        const k = key('expired');
        await rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: 'stored' }));
        // Signed with the clock set 10 s back and a 1 s lifetime: expired by RGW's clock, no waiting.
        vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 10_000 });
        const signed = Promise.all([store().presignPut(key('expired-put'), 1), store().presignGet(k, 1)]);
        const [put, get] = await signed.finally(() => vi.useRealTimers());
        expect((await fetch(put, { method: 'PUT', body: 'late', headers: { 'Content-Type': '' } })).status).toBe(403);
        expect((await fetch(get)).status).toBe(403);
        expect(await store().head(key('expired-put'))).toBeUndefined();
      });

      it('promotes a staged upload in three requests (GET, conditional PUT, DELETE), and settles a loser on the 412', async () => {
        const methods: string[] = [];
        rgw.client.middlewareStack.add(
          (next) => (args) => {
            methods.push((args.request as { method: string }).method);
            return next(args);
          },
          { step: 'finalizeRequest', name: 'countRequests' },
        );
        onTestFinished(() => {
          rgw.client.middlewareStack.remove('countRequests');
        });
        const staging = new S3Staging(rgw.client, bucket);
        const k = key('counted');
        const stage = async (body: string, id: string) => {
          const upload = stagedUploadOf(`.staging/${k}/${id.repeat(24)}`)!;
          await rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: upload.stagingKey, Body: body }));
          methods.length = 0;
          return upload;
        };
        const first = await stage('first', 'a');
        expect((await staging.promote(first)).outcome).toBe('promoted');
        expect(methods).toEqual(['GET', 'PUT', 'DELETE']);
        // Announced again before its record (kept), then another upload of the name: settled by the PUT's 412 and a HEAD.
        const again = await stage('first', 'b');
        expect((await staging.promote(again, undefined, { keepStaged: true })).outcome).toBe('duplicate');
        expect(methods).toEqual(['GET', 'PUT', 'HEAD']);
        const other = await stage('other', 'c');
        expect((await staging.promote(other)).outcome).toBe('refused');
        expect(methods).toEqual(['GET', 'PUT', 'HEAD', 'DELETE']);
        const got = await rgw.client.send(new GetObjectCommand({ Bucket: bucket, Key: k }));
        expect(await got.Body!.transformToString()).toBe('first');
        expect(await statusOf(rgw.client.send(new GetObjectCommand({ Bucket: bucket, Key: other.stagingKey })))).toBe(404);
      });

      it('refuses a second conditional PUT of a stored key (412) and keeps the first bytes', async () => {
        const k = key('second');
        const put = (body: string) => rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: body, IfNoneMatch: '*' }));
        expect(await statusOf(put('first'))).toBe(200);
        expect(await statusOf(put('second'))).toBe(412);
        const got = await rgw.client.send(new GetObjectCommand({ Bucket: bucket, Key: k }));
        expect(await got.Body!.transformToString()).toBe('first');
      });
    },
  );
});
it('puts no conditional header in upload addresses on Amazon S3 either (the mission client sends none)', async () => {
  // Presigning needs credentials but no network: AWS's documented example keys, whether or
  // not the RGW tests above ran (and set theirs) in this process.
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAIOSFODNN7EXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
  onTestFinished(() => {
    vi.unstubAllEnvs();
  });
  const store = new S3ObjectStore(parseS3Url('s3://some-bucket?region=eu-west-1'));
  const address = await store.presignPut(key('aws'), 3600);
  expect(signedHeaders(address)).toEqual(['host']);
  expect(address).toMatch(/^https:\/\/some-bucket\.s3\.eu-west-1\.amazonaws\.com\//);
  store.close();
});

it('takes the single-PUT limit of promotions from SDC_STORE maxPutBytes: 5 GiB unless lowered, never under 5 MiB or over 5 GiB', () => {
  expect(parseS3Url('s3://some-bucket?region=eu-west-1').maxPutBytes).toBe(5 * 1024 ** 3);
  expect(parseS3Url('s3://some-bucket?region=eu-west-1&maxPutBytes=8388608').maxPutBytes).toBe(8 * 1024 * 1024);
  for (const bad of ['1024', String(5 * 1024 ** 3 + 1), '8MiB', '-8388608']) {
    expect(() => parseS3Url(`s3://some-bucket?maxPutBytes=${bad}`), bad).toThrow('SDC_STORE maxPutBytes must be a number of bytes from 5242880 (5 MiB) to 5368709120 (5 GiB, the default)');
  }
});

it('takes the short calls\' deadline from SDC_STORE operationTimeoutMs: 3 s unless set, never under 100 ms', () => {
  expect(parseS3Url('s3://some-bucket?region=eu-west-1').operationTimeoutMs).toBe(3000);
  expect(parseS3Url('s3://some-bucket?region=eu-west-1&operationTimeoutMs=1500').operationTimeoutMs).toBe(1500);
  for (const bad of ['99', '3s', '-1']) {
    expect(() => parseS3Url(`s3://some-bucket?operationTimeoutMs=${bad}`), bad).toThrow('SDC_STORE operationTimeoutMs must be a number of milliseconds, at least 100 (default 3000)');
  }
});

it('copies objects larger than one PUT in parts S3 takes: 5 MiB to 5 GiB each, at most 10,000', () => {
  const MiB = 1024 * 1024;
  expect(copyPartSize(30 * MiB, 8 * MiB)).toBe(8 * MiB);
  expect(copyPartSize(6 * 1024 ** 3, 5 * 1024 ** 3)).toBe(512 * MiB);
  for (const size of [5 * 1024 ** 4, 4 * 1024 ** 4 + 12345, 6 * 1024 ** 3]) {
    const part = copyPartSize(size, 5 * 1024 ** 3);
    expect(part).toBeGreaterThanOrEqual(5 * MiB);
    expect(part).toBeLessThanOrEqual(5 * 1024 ** 3);
    expect(Math.ceil(size / part)).toBeLessThanOrEqual(10_000);
  }
});
