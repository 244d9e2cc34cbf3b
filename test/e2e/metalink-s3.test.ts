import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseS3Url } from '../../src/store/index.js';
import { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { HAVE_ARIA2, NO_ARIA2, runAria2 } from '../helpers/aria2.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const CDF = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const PKTS = 'imap/swe/l0/2024/01/imap_swe_l0_raw_20240105_20240105_v00-01.pkts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** name -> signed address of each <file> (entities undone). */
function addressesOf(document: string): Map<string, string> {
  const found = [...document.matchAll(/<file name="([^"]*)">.*?<url>([^<]*)<\/url><\/file>/g)];
  return new Map(found.map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]));
}

// The bytes on S3 (Ceph RGW): media types and ETags of what the signed addresses serve, and aria2c against the bucket.
describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'format=metalink and stored bytes on S3' : `format=metalink on S3: ${S3_SKIPPED}`, () => {
  let s3: S3TestServer;
  let store: S3ObjectStore;
  let server: TestServer;
  let work: string;
  const bytes = new Map<string, Buffer>([
    [CDF, randomBytes(70_000)],
    [PKTS, randomBytes(5000)],
  ]);

  beforeAll(async () => {
    s3 = await startS3TestServer();
    store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    server = await startTestServer({ store: s3.storeUrl, downloadTtl: '900' });
    for (const [path, body] of bytes) {
      expect((await uploadFile(server.url, path, body)).status).toBe(200);
      // The staged upload is promoted and indexed when first asked for.
      expect((await fetch(`${server.url}/download/${path}`, { redirect: 'manual' })).status).toBe(302);
    }
    work = await mkdtemp(join(tmpdir(), 'sdc-metalink-s3-'));
  });
  afterAll(async () => {
    await server?.stop();
    store?.close();
    await s3?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const document = async () => {
    const res = await fetch(`${server.url}/query?instrument=swe&format=metalink`);
    expect(res.status).toBe(200);
    return res.text();
  };

  it('stores .cdf as application/x-cdf and .pkts as bytes, and serves them so with a strong ETag', async () => {
    const expected: Record<string, string> = { [CDF]: 'application/x-cdf', [PKTS]: 'application/octet-stream' };
    for (const [path, type] of Object.entries(expected)) {
      const head = await store.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: path }));
      expect(head.ContentType, path).toBe(type);
    }
    const text = await document();
    const addresses = addressesOf(text);
    expect([...addresses.keys()]).toEqual([PKTS, CDF]);
    for (const [path, url] of addresses) {
      expect(new URL(url).origin).toBe(s3.endpoint);
      expect(text).toContain(`<size>${bytes.get(path)!.length}</size><hash type="sha-256">${sha256(bytes.get(path)!)}</hash>`);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(expected[path]);
      expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${path.split('/').pop()}"`);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes.get(path)!)).toBe(true);
      // The /download redirect hands out the same kind of address.
      const redirect = await fetch(`${server.url}/download/${path}`, { redirect: 'manual' });
      expect(new URL(redirect.headers.get('location')!).pathname).toBe(new URL(url).pathname);
    }
  });

  it.skipIf(!HAVE_ARIA2)(HAVE_ARIA2 ? 'is fetched and verified by aria2c -M, which reports an object changed in the bucket' : `aria2c -M: ${NO_ARIA2}`, async () => {
    const meta4 = join(work, 'swe.meta4');
    await writeFile(meta4, await document());
    const into = join(work, 'data');
    const run = await runAria2(meta4, into);
    expect(run.code, run.output).toBe(0);
    for (const [path, body] of bytes) expect((await readFile(join(into, path))).equals(body), path).toBe(true);

    // Other bytes of the same size put straight into the bucket, behind the archive's back.
    await store.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: PKTS, Body: randomBytes(5000) }));
    const changed = join(work, 'changed.meta4');
    await writeFile(changed, await document());
    const again = join(work, 'again');
    const failed = await runAria2(changed, again);
    expect(failed.code, failed.output).toBe(32);
    expect(failed.output).toContain(`Checksum error detected. file=${join(again, PKTS)}`);
    expect((await readFile(join(again, CDF))).equals(bytes.get(CDF)!)).toBe(true);
  });
});
