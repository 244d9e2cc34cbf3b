import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseS3Url } from '../../src/store/index.js';
import { sendWithSignal } from '../../src/store/s3/s3-call-signals.js';
import { StoreDeadlineError } from '../../src/store/s3/s3-deadline.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { stagedUploadOf } from '../../src/store/s3/s3-staging-keys.js';
import { HAVE_RGW, NO_RGW, startRgw, type RgwServer } from '../helpers/rgw.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const key = (descriptor: string) => `imap/mag/l1a/2024/01/imap_mag_l1a_${descriptor}_20240105_20240105_v00-01.cdf`;

/** A store on the gateway whose SDK client counts how often it resolves each command's middleware stack. */
function countingStore(url: string): { store: S3ObjectStore; resolved: Map<string, number> } {
  const store = new S3ObjectStore(parseS3Url(url));
  const resolved = new Map<string, number>();
  // The outer function of a middleware runs once per resolution of the stack, the inner once per call.
  store.client.middlewareStack.add(
    (next, context) => {
      const name = context.commandName ?? '?';
      resolved.set(name, (resolved.get(name) ?? 0) + 1);
      return next;
    },
    { step: 'initialize', name: 'countResolutions' },
  );
  return { store, resolved };
}

/**
 * The SDK's CPU per S3 request: the store's client resolves each command's middleware stack
 * once, not at every call, while its short calls keep their deadline and a promotion's PUT
 * stays abortable (src/store/s3/s3-call-signals.ts; docs/performance.md, "AWS SDK per request").
 */
describe.skipIf(!HAVE_RGW)(HAVE_RGW ? 'the S3 client\'s handler cache on radosgw' : NO_RGW, () => {
  let rgw: RgwServer;
  let bucket: string;
  let proxy: TcpProxy;

  beforeAll(async () => {
    rgw = await startRgw();
    bucket = await rgw.createBucket();
    const endpoint = new URL(rgw.endpoint);
    proxy = new TcpProxy(endpoint.hostname, Number(endpoint.port));
    await proxy.start();
  }, 120_000);

  afterAll(async () => {
    await proxy?.stop();
    await rgw?.stop();
  }, 60_000);

  it('resolves each command\'s middleware once however many calls, a promotion\'s aborting PUT included', async () => {
    const { store, resolved } = countingStore(rgw.storeUrl(bucket));
    try {
      for (const descriptor of ['one', 'two', 'three']) expect(await store.head(key(descriptor))).toBeUndefined();
      const upload = stagedUploadOf(`.staging/${key('cached')}/${'a'.repeat(24)}`)!;
      await rgw.client.send(new PutObjectCommand({ Bucket: bucket, Key: upload.stagingKey, Body: 'bytes' }));
      // GET, a PUT sent with a signal (ends it on a digest mismatch), DELETE.
      expect((await store.staging.promote(upload)).outcome).toBe('promoted');
      expect((await store.head(key('cached')))?.size).toBe(5);
      for await (const _ of store.list()) void _;
      expect(Object.fromEntries(resolved)).toEqual({
        HeadObjectCommand: 1,
        GetObjectCommand: 1,
        PutObjectCommand: 1,
        DeleteObjectCommand: 1,
        ListObjectsV2Command: 1,
      });
    } finally {
      store.close();
    }
  });

  it('ends a short call at its deadline with StoreDeadlineError, a PUT when its caller\'s signal fires, both connections closed', { timeout: 60_000 }, async () => {
    const url = rgw.storeUrl(bucket).replace(encodeURIComponent(rgw.endpoint), encodeURIComponent(`http://${proxy.url}`));
    const { store, resolved } = countingStore(`${url}&operationTimeoutMs=300`);
    let resumed = false;
    try {
      // A keep-alive connection exists before the store stops answering, as in service.
      expect(await store.head(key('before'))).toBeUndefined();
      proxy.blackhole();
      const err = await store.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key('frozen') })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreDeadlineError);
      expect((err as Error).message).toBe('the object store did not answer HeadObject within 300 ms');
      // A PUT is no short call: its caller's signal (a promotion's digest mismatch) ends it, in flight.
      const cut = new AbortController();
      const put = sendWithSignal(store.client, new PutObjectCommand({ Bucket: bucket, Key: key('cut'), Body: 'bytes' }), cut.signal).catch((e: unknown) => e);
      await vi.waitFor(() => expect(proxy.openConnections).toBe(2), { timeout: 30_000, interval: 50 });
      cut.abort(new Error('digest mismatch'));
      expect(((await put) as Error).name).toBe('AbortError');
      expect(resolved.get('HeadObjectCommand')).toBe(1);
      // Both were aborted, not left waiting: once the store answers again (the proxy reads again and
      // sees them closed) no connection is left; a HEAD still waiting would complete and stay pooled.
      await proxy.resume();
      resumed = true;
      await vi.waitFor(() => expect(proxy.openConnections).toBe(0), { timeout: 30_000, interval: 50 });
    } finally {
      if (!resumed) await proxy.resume();
      store.close();
    }
  });
});
