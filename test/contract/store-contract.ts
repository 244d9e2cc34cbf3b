import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectDigest, ObjectStore } from '../../src/store/index.js';

export interface StoreUnderTest {
  readonly store: ObjectStore;
  /** Stops what the test started and removes what it stored. */
  dispose(): Promise<void>;
}

/** PUT to a signed address the way the mission's client does: empty Content-Type, no overwrite. */
export function putBytes(address: string, bytes: Uint8Array): Promise<Response> {
  return fetch(address, { method: 'PUT', body: bytes, headers: { 'Content-Type': '', 'If-None-Match': '*' } });
}

/**
 * Stores `bytes` under `k` as a client and the service do together: a PUT to the signed
 * address, then, on a store that takes uploads under staging keys (S3), the promotion the
 * ingest does. Answers the PUT's response.
 */
export async function storeThrough(store: ObjectStore, k: string, bytes: Uint8Array): Promise<Response> {
  const put = await putBytes(await store.presignPut(k, 60), bytes);
  if (put.ok && store.staging) for await (const upload of store.staging.listStaged(k)) await store.staging.promote(upload);
  return put;
}

const key = (descriptor: string, instrument = 'swe') =>
  `imap/${instrument}/l1a/2024/01/imap_${instrument}_l1a_${descriptor}_20240105_20240105_v00-01.cdf`;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/**
 * A digest's size and SHA-256; what the store keeps with the bytes besides (the ingestion date a
 * promotion or a local write sets, the uploader) must be what it says, when it is there.
 */
function bytesOf(digest: ObjectDigest): { size: number; sha256: string } {
  if (digest.ingestionDate !== undefined) expect(new Date(digest.ingestionDate).toISOString()).toBe(digest.ingestionDate);
  return { size: digest.size, sha256: digest.sha256 };
}

/**
 * The object store contract: every adapter runs it (test/contract/*-store.test.ts),
 * through the signed addresses a client gets, over HTTP. `extra` adds what only
 * that adapter has.
 */
export function testStore(name: string, make: () => Promise<StoreUnderTest>, extra?: (get: () => ObjectStore) => void): void {
  describe(`store contract: ${name}`, () => {
    let subject: StoreUnderTest;
    const store = () => subject.store;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('answers HEAD of an absent key with nothing', async () => {
      expect(await store().head(key('absent'))).toBeUndefined();
      await store().ping();
    });

    it('takes bytes PUT to a signed address and serves them back through a signed GET', async () => {
      const bytes = randomBytes(300_000);
      const k = key('roundtrip');
      const put = await storeThrough(store(), k, bytes);
      expect(put.status).toBe(200);
      expect((await store().head(k))?.size).toBe(bytes.length);
      expect(bytesOf(await store().digest(k))).toEqual({ size: bytes.length, sha256: sha256(bytes) });

      const address = await store().presignGet(k, 60);
      expect(address).toMatch(/^https?:\/\//);
      const got = await fetch(address);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-disposition')).toBe(`attachment; filename="${k.slice(k.lastIndexOf('/') + 1)}"`);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);

      const part = await fetch(address, { headers: { Range: 'bytes=10-19' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
    });

    it('takes an empty file', async () => {
      const k = key('empty');
      expect((await storeThrough(store(), k, new Uint8Array())).status).toBe(200);
      expect(bytesOf(await store().digest(k))).toEqual({ size: 0, sha256: sha256(new Uint8Array()) });
    });

    it('lists every stored object once, in byte order of the keys', async () => {
      const keys = [key('list-b', 'hit'), key('list-a', 'hi-45'), key('List-c', 'hi-45')];
      for (const k of keys) expect((await storeThrough(store(), k, Buffer.from(k))).status).toBe(200);
      const listed: string[] = [];
      for await (const object of store().list()) listed.push(object.key);
      expect(listed).toEqual(expect.arrayContaining([...keys, key('roundtrip'), key('empty')]));
      expect(listed).toEqual([...listed].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      expect(new Set(listed).size).toBe(listed.length);
    });

    it('purges a stored object (sdc purge): gone from HEAD, the listing and its signed GET; a second purge finds nothing', async () => {
      const k = key('purged');
      expect((await storeThrough(store(), k, Buffer.from('evidence'))).status).toBe(200);
      const address = await store().presignGet(k, 60);
      expect(await store().purge(k)).toBe(true);
      expect(await store().head(k)).toBeUndefined();
      for await (const object of store().list()) expect(object.key).not.toBe(k);
      expect((await fetch(address)).status).toBe(404);
      expect(await store().purge(k)).toBe(false);
      expect(await store().purge(key('never-stored'))).toBe(false);
    });

    extra?.(store);
  });
}
