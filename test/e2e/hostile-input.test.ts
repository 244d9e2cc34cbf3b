import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UrlSigner } from '../../src/store/index.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const SECRET = 'hostile-test-secret';

/** Sends a raw request path, byte for byte (fetch would normalise `..`). */
function rawGet(base: string, path: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hostile input never reaches outside the store and never answers 5xx', () => {
  let server: TestServer;
  const signer = new UrlSigner(Buffer.from(SECRET));
  const SECRET_TEXT = 'this file lies outside the store';

  beforeAll(async () => {
    server = await startTestServer({ signingSecret: SECRET });
    // A file beside the store that a traversal would try to reach.
    await writeFile(join(server.home, 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf'), SECRET_TEXT);
    expect((await uploadFile(server.url, SAMPLE_PATH, 'inside')).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  const paths = [
    '/download/../imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
    '/download/..%2Fimap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
    '/download/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '/download/imap%2Fswe%2Fl1a%2F2024%2F01%2F..%2F..%2F..%2F..%2F..%2Fimap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
    '/download/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf%00',
    '/download/%00',
    '/download/%zz',
    '/download/%E0%A4%A',
    `/download/${'a/'.repeat(5000)}x.cdf`,
    `/download/${'x'.repeat(10_000)}`,
    `/upload/${'x'.repeat(10_000)}.cdf`,
    '/upload/../../imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
    '/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf%2F..%2F..',
    '/upload/imap_swe_l1a_sci_2024%00105_20240105_v00-01.cdf',
    '/upload/imap_swe_l1a_sci_20240105_20240105_v00-01.c%C3%A9f',
    "/query?instrument=swe'%20OR%201=1--",
    '/query?descriptor=%00',
    '/query?instrument=swe&instrument=mag',
    '/query?start_date=20240105&start_date=20240106',
    '/query?file_path=..%2F..%2Fetc%2Fpasswd',
    `/query?descriptor=${'d'.repeat(10_000)}`,
    '/query?%zz=1',
    '/query?=',
    '/query?&&&',
    '/store/..%2F..%2Fetc%2Fpasswd?expires=9999999999&signature=00',
    '/store/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf',
  ];

  it.each(paths)('%s -> 4xx with a message, or a success the spec allows', async (path) => {
    const res = await rawGet(server.url, path);
    expect(res.status, res.body).toBeLessThan(500);
    expect(res.body).not.toContain(SECRET_TEXT);
    expect(res.body).not.toMatch(/at .*\.(js|ts):\d+/); // no stack trace
    if (res.status >= 400) expect(res.body.length).toBeGreaterThan(0);
  });

  it('a validly signed address for a key outside the store layout is refused', async () => {
    for (const key of ['../imap_swe_l1a_sci_20240105_20240105_v00-01.cdf', '../../etc/passwd', 'imap/../../x.cdf']) {
      const expires = Math.floor(Date.now() / 1000) + 60;
      const sig = signer.sign('GET', key, expires);
      const res = await rawGet(server.url, `/store/${key.split('/').map(encodeURIComponent).join('%2F')}?expires=${expires}&signature=${sig}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body).not.toContain(SECRET_TEXT);
    }
  });

  it('repeated query parameters are refused with a clear 400, not silently picked', async () => {
    const res = await rawGet(server.url, '/query?instrument=swe&instrument=mag');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toBe('instrument was given more than once. Give each query parameter at most once.');
  });

  it('SQL in a value is data, not code', async () => {
    const res = await rawGet(server.url, "/query?descriptor=sci'%20OR%20'1'='1");
    expect(res.status).toBe(400);
    const ok = await rawGet(server.url, '/query');
    expect(JSON.parse(ok.body)).toHaveLength(1);
  });
});
