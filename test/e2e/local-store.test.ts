import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UrlSigner } from '../../src/store/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const SECRET = 'local-store-test-secret';
const NAME = 'imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const PATH = `imap/mag/l1b/2024/03/${NAME}`;

/** Every file under a folder, temporary ones included. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('local store: signed addresses and atomic, never-overwriting writes', () => {
  let server: TestServer;
  const signer = new UrlSigner(Buffer.from(SECRET));
  const storeDir = () => join(server.home, 'store');

  beforeAll(async () => {
    server = await startTestServer({ signingSecret: SECRET });
  });
  afterAll(async () => {
    await server.stop();
  });

  const address = (method: 'GET' | 'PUT', key: string, expires: number) =>
    `${server.url}/store/${key}?expires=${expires}&signature=${signer.sign(method, key, expires)}`;
  const future = () => Math.floor(Date.now() / 1000) + 600;

  it('refuses tampered and expired PUT addresses with 403 and stores nothing', async () => {
    const good = address('PUT', PATH, future());
    const tampered = [
      good.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`),
      good.replace(/expires=(\d+)/, (_m, e: string) => `expires=${Number(e) + 1}`),
      good.replace('2024/03', '2024/04'),
      good.replace(/&signature=[0-9a-f]+/, ''),
      address('GET', PATH, future()), // a download signature used to upload
    ];
    for (const url of tampered) {
      const res = await fetch(url, { method: 'PUT', body: 'evil', headers: { 'Content-Type': '' } });
      expect(res.status, url).toBe(403);
      expect(await res.text()).toMatch(/signature|expired/);
    }
    const expired = await fetch(address('PUT', PATH, Math.floor(Date.now() / 1000) - 1), { method: 'PUT', body: 'late' });
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('expired');
    expect(await filesUnder(storeDir())).toEqual([]);
    expect((await fetch(`${server.url}/query`).then((r) => r.json())) as unknown[]).toEqual([]);
  });

  it('lets exactly one of 8 racing PUTs of one name store its bytes; the others get 409', async () => {
    const url = ((await (await fetch(`${server.url}/upload/${PATH}`)).json()) as string);
    const bodies = Array.from({ length: 8 }, (_, i) => `writer ${i} `.repeat(50_000));
    const statuses = await Promise.all(
      bodies.map((body) => fetch(url, { method: 'PUT', body, headers: { 'Content-Type': '' } }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    const stored = await readFile(join(storeDir(), PATH), 'utf8');
    expect(stored).toBe(bodies[statuses.indexOf(200)]);
    // No temporary file is left behind, and the one record matches the stored bytes.
    expect(await filesUnder(storeDir())).toEqual([join(storeDir(), PATH)]);
    const records = (await fetch(`${server.url}/query?file_path=${PATH}`).then((r) => r.json())) as { size: number }[];
    expect(records).toHaveLength(1);
    expect(records[0]!.size).toBe(Buffer.byteLength(stored));
  });

  it('refuses tampered and expired GET addresses with 403', async () => {
    const location = (await fetch(`${server.url}/download/${NAME}`, { redirect: 'manual' })).headers.get('location')!;
    const ok = await fetch(location);
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
    expect((await fetch(location.replace(/expires=\d+/, 'expires=1'))).status).toBe(403);
    expect((await fetch(address('GET', PATH, 1))).status).toBe(403);
    expect((await fetch(location.replace(/signature=[0-9a-f]{4}/, 'signature=0000'))).status).toBe(403);
  });

  it('answers HEAD on a signed GET address with the headers and no body', async () => {
    const location = (await fetch(`${server.url}/download/${NAME}`, { redirect: 'manual' })).headers.get('location')!;
    const head = await fetch(location, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBeTruthy();
    expect(head.headers.get('last-modified')).toBeTruthy();
    expect(await head.text()).toBe('');
  });

  it('serves .cdf as application/x-cdf and .pkts as bytes, with a strong ETag that If-None-Match and If-Range honour', async () => {
    const pkts = 'imap/hit/l0/2024/02/imap_hit_l0_raw_20240229_20240229_v00-02.pkts';
    const put = await fetch((await (await fetch(`${server.url}/upload/${pkts}`)).json()) as string, { method: 'PUT', body: '0123456789' });
    expect(put.status).toBe(200);
    const cdf = await fetch(address('GET', PATH, future()));
    expect(cdf.headers.get('content-type')).toBe('application/x-cdf');
    await cdf.arrayBuffer();
    const signed = address('GET', pkts, future());
    const whole = await fetch(signed);
    expect(whole.headers.get('content-type')).toBe('application/octet-stream');
    const etag = whole.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    await whole.arrayBuffer();
    // undici's request: fetch adds Cache-Control: no-cache to conditional requests, which asks for the whole file.
    const revalidated = await request(signed, { headers: { 'if-none-match': etag } });
    await revalidated.body.dump();
    expect(revalidated.statusCode).toBe(304);
    const part = await fetch(signed, { headers: { range: 'bytes=4-', 'if-range': etag } });
    expect([part.status, await part.text()]).toEqual([206, '456789']);
    const stale = await fetch(signed, { headers: { range: 'bytes=4-', 'if-range': '"other"' } });
    expect([stale.status, await stale.text()]).toEqual([200, '0123456789']);
  });
});
