import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// docs/api.md, "Checked transfers", on S3 (Ceph RGW) + PostgreSQL: the promotion refuses other bytes.
const PATH = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const hex = (bytes: string) => createHash('sha256').update(bytes).digest('hex');
const b64 = (bytes: string) => createHash('sha256').update(bytes).digest('base64');

describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  let backends: ProductionBackends;
  let server: TestServer;
  beforeAll(async () => {
    backends = await startProductionBackends();
    server = await startTestServer({ ...backends.settings, requireKeys: 'false' });
  });
  afterAll(async () => {
    await server?.stop();
    await backends?.stop();
  });

  const objects = async () =>
    ((await backends.rgw.client.send(new ListObjectsV2Command({ Bucket: backends.bucket }))).Contents ?? []).map((o) => o.Key);

  it('binds the address to the digest; the promotion refuses other bytes, removes them and leaves the name free', async () => {
    const right = 'the right bytes';
    const res = await fetch(`${server.url}/upload/${PATH}?sha256=${hex(right)}`);
    expect(res.status).toBe(200);
    const address = (await res.json()) as string;
    const url = new URL(address);
    expect(url.searchParams.get('x-amz-meta-sha256')).toBe(hex(right));
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('x-amz-checksum-sha256');
    // The signed checksum header must be sent.
    expect((await fetch(address, { method: 'PUT', body: 'other bytes' })).status).toBe(403);
    // Ceph RGW 16 takes other bytes despite x-amz-checksum-sha256 (Amazon S3 answers 400 BadDigest).
    const wrong = await fetch(address, { method: 'PUT', body: 'other bytes', headers: { 'x-amz-checksum-sha256': b64(right) } });
    expect(wrong.status).toBe(200);
    // No notification here: asking for the name promotes what waits for it, and the promotion refuses these bytes.
    const again = await fetch(`${server.url}/upload/${PATH}?sha256=${hex(right)}`);
    expect(again.status).toBe(200);
    const next = (await again.json()) as string;
    expect(await objects()).toEqual([]);
    expect((await fetch(`${server.url}/query`).then((r) => r.json())) as unknown[]).toEqual([]);
    // The right bytes, then: promoted and recorded.
    expect((await fetch(next, { method: 'PUT', body: right, headers: { 'x-amz-checksum-sha256': b64(right) } })).status).toBe(200);
    expect((await fetch(`${server.url}/upload/${PATH}`)).status).toBe(409);
    const records = (await fetch(`${server.url}/query`).then((r) => r.json())) as { file_path: string; sha256: string }[];
    expect(records.map((r) => [r.file_path, r.sha256])).toEqual([[PATH, hex(right)]]);
    expect(await objects()).toEqual([PATH]);
  });

  it('an upload in parts declared at opening: the joined object carries the digest; other bytes are never promoted', async () => {
    const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
    const right = 'right bytes, in one part';
    const open = async () => {
      const res = await fetch(`${server.url}/uploads/${path}?sha256=${hex(right)}`, { method: 'POST' });
      expect(res.status).toBe(200);
      return ((await res.json()) as { uploadId: string }).uploadId;
    };
    const send = async (uploadId: string, body: string) => {
      const url = ((await (await fetch(`${server.url}/uploads/${path}?uploadId=${uploadId}&parts=1`)).json()) as { parts: { url: string }[] }).parts[0]!.url;
      const etag = (await fetch(url, { method: 'PUT', body })).headers.get('etag')!;
      return fetch(`${server.url}/uploads/${path}?uploadId=${uploadId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ parts: [{ partNumber: 1, etag }] }),
      });
    };
    const wrong = await send(await open(), 'wrong bytes');
    expect([wrong.status, wrong.headers.get('x-error-code')]).toEqual([400, 'SDC_DIGEST_MISMATCH']);
    expect(await wrong.text()).toContain(hex('wrong bytes'));
    expect((await objects()).filter((k) => k?.includes('imap_swe'))).toEqual([]);
    const ok = await send(await open(), right);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { sha256: string }).sha256).toBe(hex(right));
  });
});
