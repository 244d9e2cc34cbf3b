import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { partsUploaded as uploadParts } from '../helpers/parts-upload.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const MiB = 1024 * 1024;
const pathOf = (label: string) => `imap/swe/l1a/2024/01/imap_swe_l1a_${label}_20240105_20240105_v00-01.cdf`;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// Uploads in parts on a real S3 server (Ceph RGW) with PostgreSQL: the same interface and the
// same guarantees as on the local store, although RGW ignores If-None-Match on
// CompleteMultipartUpload (the completion is promoted by a conditional PutObject instead).
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`uploads in parts on ${PRODUCTION_BACKENDS_LABEL}`, () => {
  let backends: ProductionBackends;
  let server: TestServer;
  let dataDir: string;
  const records = async (path: string) => (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { size: number; sha256: string }[];
  const keys = async (prefix: string) =>
    ((await backends.rgw.client.send(new ListObjectsV2Command({ Bucket: backends.bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key);
  const openUploads = async () => (await backends.rgw.client.send(new ListMultipartUploadsCommand({ Bucket: backends.bucket }))).Uploads ?? [];
  const stored = async (key: string) =>
    Buffer.from(await (await backends.rgw.client.send(new GetObjectCommand({ Bucket: backends.bucket, Key: key }))).Body!.transformToByteArray());

  const partsUploaded = (path: string, bytes: Buffer, partSize: number) => uploadParts(server.url, path, bytes, partSize);
  const complete = (path: string, uploadId: string, parts: unknown) =>
    fetch(`${server.url}/uploads/${path}?uploadId=${encodeURIComponent(uploadId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parts }),
    });

  beforeAll(async () => {
    backends = await startProductionBackends();
    server = await startTestServer(backends.settings);
    dataDir = await mkdtemp(join(tmpdir(), 'sdc-multipart-s3-'));
  });
  afterAll(async () => {
    await server?.stop();
    await backends?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the SDK sends a 300 MB file in parts straight to S3; the record describes the bytes under the real key', { tags: ['slow'], timeout: 300_000 }, async () => {
    const path = pathOf('big');
    const file = join(dataDir, path);
    await mkdir(dirname(file), { recursive: true });
    const out = createWriteStream(file);
    const block = randomBytes(MiB);
    for (let n = 0; n < 300; n++) {
      block.writeUInt32BE(n, 0);
      if (!out.write(Buffer.from(block))) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve) => out.end(() => resolve()));
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
    const expected = hash.digest('hex');

    const client = new Client({ url: server.url, retry: { retries: 2, baseDelayMs: 10 } });
    try {
      expect(await client.upload(file, { dataDir })).toEqual({ path, size: 300 * MiB, status: 'uploaded' });
    } finally {
      await client.close();
    }
    expect(sha256(await stored(path))).toBe(expected);
    expect(await records(path)).toMatchObject([{ size: 300 * MiB, sha256: expected }]);
    expect(await keys('.multipart/')).toEqual([]);
    expect(await openUploads()).toEqual([]);
    await rm(file);
  });

  it('racing completions of one name: one object, one record, the winner\'s bytes', async () => {
    const path = pathOf('race');
    const contenders = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const bytes = Buffer.concat([Buffer.alloc(5 * MiB, i + 1), Buffer.from(`tail ${i}`)]);
        return { bytes, ...(await partsUploaded(path, bytes, 5 * MiB)) };
      }),
    );
    const answers = await Promise.all(contenders.map((c) => complete(path, c.uploadId, c.parts)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
    const winner = contenders[answers.findIndex((a) => a.status === 200)]!;
    expect((await stored(path)).equals(winner.bytes)).toBe(true);
    expect(await records(path)).toMatchObject([{ sha256: sha256(winner.bytes) }]);
    expect(await keys('.multipart/')).toEqual([]);
  }, 120_000);

  it('a completion sent again (its answer lost) answers 200 and the same result; another upload of the name is refused as before', async () => {
    const path = pathOf('retried');
    const contenders = await Promise.all([1, 2].map((i) => partsUploaded(path, Buffer.concat([Buffer.alloc(5 * MiB, i), Buffer.from(`tail ${i}`)]), 5 * MiB)));
    const first = await complete(path, contenders[0]!.uploadId, contenders[0]!.parts);
    expect(first.status).toBe(200);
    const result = (await first.json()) as { path: string; size: number; sha256: string };
    // S3 no longer knows the upload: the object under the name carries its mark.
    const head = await backends.rgw.client.send(new HeadObjectCommand({ Bucket: backends.bucket, Key: path }));
    expect(head.Metadata?.['sdc-upload']).toBe(contenders[0]!.uploadId.slice(0, 24));
    for (let i = 0; i < 2; i++) {
      const again = await complete(path, contenders[0]!.uploadId, contenders[0]!.parts);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual(result);
    }
    // The upload that lost the name, and an id of the same opener never completed here: 409, the file stays.
    expect((await complete(path, contenders[1]!.uploadId, contenders[1]!.parts)).status).toBe(409);
    expect((await complete(path, contenders[1]!.uploadId, contenders[1]!.parts)).status).toBe(409);
    expect((await complete(path, `${contenders[1]!.uploadId.slice(0, 24)}:unknown`, contenders[0]!.parts)).status).toBe(409);
    expect(await records(path)).toMatchObject([{ size: result.size, sha256: result.sha256 }]);
    expect(await keys('.multipart/')).toEqual([]);
  }, 60_000);

  it('a completion for a name stored meanwhile (by a plain PUT, no conditional header) is refused, and the stored file stays', async () => {
    const path = pathOf('taken');
    const { uploadId, parts } = await partsUploaded(path, Buffer.alloc(6 * MiB, 9), 5 * MiB);
    expect((await uploadFile(server.url, path, 'the first file')).status).toBe(200);
    // The single PUT waits under its staging key until something asks for the name: the completion does.
    const res = await complete(path, uploadId, parts);
    expect(res.status).toBe(409);
    expect((await stored(path)).toString()).toBe('the first file');
    expect(await records(path)).toMatchObject([{ sha256: sha256(Buffer.from('the first file')) }]);
    expect(await keys('.multipart/')).toEqual([]);
  }, 60_000);

  it('takes a file larger than one PUT, up to what S3 stores (5 TiB), and refuses more up front', async () => {
    const over = await fetch(`${server.url}/uploads/${pathOf('huge')}?size=${5 * 1024 ** 4 + 1}`, { method: 'POST' });
    expect(over.status).toBe(413);
    expect(await over.text()).toContain(`at most ${5 * 1024 ** 4} bytes`);
    const big = await fetch(`${server.url}/uploads/${pathOf('huge')}?size=${6 * 1024 ** 3}`, { method: 'POST' });
    expect(big.status).toBe(200);
    const { uploadId } = (await big.json()) as { uploadId: string };
    expect((await fetch(`${server.url}/uploads/${pathOf('huge')}?uploadId=${encodeURIComponent(uploadId)}`, { method: 'DELETE' })).status).toBe(204);
  });
});
