import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// docs/api.md, "Checked transfers": uploads bound to a declared SHA-256, downloads that say theirs.
const PATH = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const hex = (bytes: string) => createHash('sha256').update(bytes).digest('hex');
const b64 = (bytes: string) => createHash('sha256').update(bytes).digest('base64');

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('checked transfers on the local store', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  const addressFor = async (path: string, sha256: string): Promise<string> => {
    const res = await fetch(`${server.url}/upload/${path}?sha256=${sha256}`);
    expect(res.status).toBe(200);
    return (await res.json()) as string;
  };

  it('refuses a badly spelled sha256 with a 400 that says what is expected', async () => {
    for (const bad of ['abc', 'g'.repeat(64), 'a'.repeat(65)]) {
      const res = await fetch(`${server.url}/upload/${PATH}?sha256=${bad}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('x-error-code')).toBe('SDC_INVALID_DIGEST');
      expect(await res.text()).toContain('64 hexadecimal digits');
    }
  });

  it('refuses other bytes (400 naming both digests, nothing stored, name free); the right bytes then store', async () => {
    const right = 'the right bytes';
    const url = await addressFor(PATH, hex(right).toUpperCase());
    expect(url).toContain(`sha256=${hex(right)}`);
    const wrong = await fetch(url, { method: 'PUT', body: 'other bytes', headers: { 'Content-Type': '' } });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('x-error-code')).toBe('SDC_DIGEST_MISMATCH');
    const text = await wrong.text();
    expect(text).toContain(hex(right));
    expect(text).toContain(hex('other bytes'));
    expect(await filesUnder(join(server.home, 'store'))).toEqual([]);
    expect((await fetch(`${server.url}/query`).then((r) => r.json())) as unknown[]).toEqual([]);
    // The digest is part of what is signed: another one in the address is a bad signature.
    const forged = await fetch(url.replace(hex(right), hex('other bytes')), { method: 'PUT', body: 'other bytes' });
    expect(forged.status).toBe(403);
    // The same address, the right bytes: stored.
    const ok = await fetch(url, { method: 'PUT', body: right, headers: { 'Content-Type': '' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('etag')).toBe(`"${hex(right)}"`);
  });

  it('an upload in parts declared at opening: completion refuses other bytes (400 naming both), the name stays free', async () => {
    const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
    const right = 'right bytes, in one part';
    const opened = await fetch(`${server.url}/uploads/${path}?sha256=${hex(right)}`, { method: 'POST' });
    expect(opened.status).toBe(200);
    const { uploadId } = (await opened.json()) as { uploadId: string };
    const partUrl = async () =>
      ((await (await fetch(`${server.url}/uploads/${path}?uploadId=${uploadId}&parts=1`)).json()) as { parts: { url: string }[] }).parts[0]!.url;
    const complete = async (body: string) => {
      const put = await fetch(await partUrl(), { method: 'PUT', body });
      const etag = put.headers.get('etag')!;
      return fetch(`${server.url}/uploads/${path}?uploadId=${uploadId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ parts: [{ partNumber: 1, etag }] }),
      });
    };
    const wrong = await complete('wrong bytes');
    expect([wrong.status, wrong.headers.get('x-error-code')]).toEqual([400, 'SDC_DIGEST_MISMATCH']);
    const text = await wrong.text();
    expect(text).toContain(hex(right));
    expect(text).toContain(hex('wrong bytes'));
    expect((await fetch(`${server.url}/query?file_path=${path}`).then((r) => r.json())) as unknown[]).toEqual([]);
    const ok = await complete(right);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { sha256: string }).sha256).toBe(hex(right));
    expect((await fetch(`${server.url}/uploads/${path}?sha256=nothex`, { method: 'POST' })).status).toBe(400);
  });

  it('answers Repr-Digest and the SHA-256 as ETag on GET and HEAD; If-None-Match 304; If-Range honoured only when it matches', async () => {
    const path = 'imap/hit/l0/2024/02/imap_hit_l0_raw_20240229_20240229_v00-02.pkts';
    const bytes = '0123456789';
    expect((await fetch(await addressFor(path, hex(bytes)), { method: 'PUT', body: bytes })).status).toBe(200);
    const signed = (await fetch(`${server.url}/download/${path}`, { redirect: 'manual' })).headers.get('location')!;
    const etag = `"${hex(bytes)}"`;
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(signed, { method });
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('repr-digest')).toBe(`sha-256=:${b64(bytes)}:`);
      expect(res.headers.get('access-control-expose-headers') ?? '').toMatch(/Repr-Digest/i);
      expect(await res.text()).toBe(method === 'GET' ? bytes : '');
    }
    // undici's request: fetch adds Cache-Control: no-cache to conditional requests.
    const revalidated = await request(signed, { headers: { 'if-none-match': `"x", W/${etag}` } });
    await revalidated.body.dump();
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers.etag).toBe(etag);
    const changed = await request(signed, { headers: { 'if-none-match': '"other"', 'if-modified-since': new Date(Date.now() + 3600_000).toUTCString() } });
    expect([changed.statusCode, await changed.body.text()]).toEqual([200, bytes]);
    const part = await fetch(signed, { headers: { range: 'bytes=4-', 'if-range': etag } });
    expect([part.status, await part.text()]).toEqual([206, '456789']);
    expect(part.headers.get('repr-digest')).toBe(`sha-256=:${b64(bytes)}:`);
    const stale = await fetch(signed, { headers: { range: 'bytes=4-', 'if-range': '"other"' } });
    expect([stale.status, await stale.text()]).toEqual([200, bytes]);
    const matching = await fetch(signed, { headers: { 'if-match': etag } });
    expect([matching.status, await matching.text()]).toEqual([200, bytes]);
    const other = await fetch(signed, { headers: { 'if-match': '"other"' } });
    expect([other.status, other.headers.get('x-error-code')]).toEqual([412, 'SDC_PRECONDITION_FAILED']);
  });
});
