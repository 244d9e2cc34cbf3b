import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadServerConfig } from '../../src/config.js';
import { UrlSigner } from '../../src/store/local/url-signer.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const LIMIT = 1000;

/** Every file under the store, temporary ones included. */
async function storeFiles(server: TestServer): Promise<string[]> {
  const entries = await readdir(join(server.home, 'store'), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

async function uploadAddress(server: TestServer): Promise<URL> {
  return new URL((await (await fetch(`${server.url}/upload/${SAMPLE_PATH}`)).json()) as string);
}

/**
 * A chunked PUT that keeps sending until the server answers or closes: the answer
 * (or 'closed'), and how many bytes were sent by then.
 */
function chunkedPut(address: URL, chunk: Buffer, maxChunks: number): Promise<{ status: number | 'closed'; body: string; sent: number }> {
  return new Promise((resolve) => {
    let sent = 0;
    let done = false;
    const finish = (status: number | 'closed', body = '') => {
      if (!done) resolve({ status, body, sent });
      done = true;
    };
    const req = request(address, { method: 'PUT', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => finish(res.statusCode!, body));
    });
    req.on('error', () => finish('closed'));
    const pump = () => {
      if (done || sent >= chunk.length * maxChunks) return req.end();
      sent += chunk.length;
      req.write(chunk, () => setImmediate(pump));
    };
    pump();
  });
}

describe('limits', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.stop();
  });

  it('refuses a PUT whose Content-Length is over the maximum object size before storing any of it (413)', async () => {
    server = await startTestServer({ maxObjectSize: String(LIMIT) });
    const res = await fetch(await uploadAddress(server), { method: 'PUT', body: Buffer.alloc(LIMIT + 1), headers: { 'Content-Type': '' } });
    expect(res.status).toBe(413);
    expect(await res.text()).toMatch(/at most 1000 bytes \(SDC_MAX_OBJECT_SIZE\)/);
    expect(await storeFiles(server)).toEqual([]);
    // A file of exactly the limit is stored.
    const ok = await fetch(await uploadAddress(server), { method: 'PUT', body: Buffer.alloc(LIMIT), headers: { 'Content-Type': '' } });
    expect(ok.status).toBe(200);
  });

  it('stops a chunked upload as it passes the limit and leaves no file, temporary or not', async () => {
    server = await startTestServer({ maxObjectSize: String(LIMIT) });
    const result = await chunkedPut(await uploadAddress(server), Buffer.alloc(400, 1), 10_000);
    // Stopped long before the client ran out of chunks to send.
    expect(result.sent).toBeLessThan(400 * 10_000);
    if (result.status !== 'closed') {
      expect(result.status).toBe(413);
      expect(result.body).toMatch(/SDC_MAX_OBJECT_SIZE/);
    }
    expect(await storeFiles(server)).toEqual([]);
    expect(await (await fetch(`${server.url}/query`)).json()).toEqual([]);
  });

  it('answers 431 to headers and URLs past 16 KiB', async () => {
    server = await startTestServer();
    expect((await fetch(`${server.url}/query?descriptor=${'d'.repeat(17 * 1024)}`)).status).toBe(431);
    expect((await fetch(`${server.url}/query`, { headers: { 'X-Filler': 'f'.repeat(17 * 1024) } })).status).toBe(431);
  });

  it('rate-limits per key or address with 429 and Retry-After', async () => {
    server = await startTestServer({ rateLimit: '5' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await fetch(`${server.url}/query`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const limited = await fetch(`${server.url}/query`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toMatch(/at most 5 a minute.*Retry after \d+ s/);
    // A client with its own key has its own budget.
    const { key } = await server.ctx.catalog.keys().create('pipeline');
    expect((await fetch(`${server.url}/query`, { headers: { 'X-API-Key': key } })).status).toBe(200);
  });

  it('says the budget on every answer, shares it across routes, counts a HEAD once and leaves unlimited routes alone', async () => {
    server = await startTestServer({ rateLimit: '4' });
    const seen: (string | null)[][] = [];
    const headers = (res: Response) => ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'].map((h) => res.headers.get(h));
    for (const [path, method] of [['/query', 'GET'], ['/healthz', 'GET'], ['/query', 'HEAD'], ['/version', 'GET'], ['/query', 'GET']] as const) {
      const res = await fetch(`${server.url}${path}`, { method });
      await res.arrayBuffer();
      seen.push([String(res.status), ...headers(res)]);
    }
    // The window began with the first request: its reset counts down from 60 s.
    for (const row of seen.slice(0, 4)) expect(Number(row[3])).toBeGreaterThanOrEqual(59);
    expect(seen.map((row) => row.slice(0, 3))).toEqual([
      ['200', '4', '3'],
      ['200', '4', '2'],
      ['200', '4', '1'],
      ['200', '4', '0'],
      ['429', '4', '0'],
    ]);
    expect(seen[3]![4]).toBeNull(); // Retry-After only on refusals
    expect(Number(seen[4]![4])).toBe(Number(seen[4]![3]));
    // A CORS preflight spends the same budget; its 429 carries the CORS headers, so a page can read it.
    const preflight = await fetch(`${server.url}/query`, { method: 'OPTIONS', headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' } });
    expect(preflight.status).toBe(429);
    expect(preflight.headers.get('x-ratelimit-limit')).toBe('4');
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(Number(preflight.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('lets validly signed store requests through uncounted, and counts forged ones', async () => {
    server = await startTestServer({ rateLimit: '3' });
    const address = await uploadAddress(server); // 1 of 3
    const put = await fetch(address, { method: 'PUT', body: 'signed bytes' });
    expect(put.status).toBe(200);
    expect(put.headers.get('x-ratelimit-limit')).toBeNull();
    const download = await fetch(`${server.url}/download/${SAMPLE_PATH}`, { redirect: 'manual' }); // 2 of 3
    const signedGet = new URL(download.headers.get('location')!, server.url);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(signedGet);
      expect([res.status, await res.text()]).toEqual([200, 'signed bytes']);
    }
    // A forged signature spends the sender's budget like any other request.
    const forged = new URL(signedGet);
    forged.searchParams.set('signature', '0'.repeat(64));
    const refused = await fetch(forged); // 3 of 3
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await fetch(forged)).status).toBe(429);
  });

  it('checks a signed store request\'s signature once, for the rate limit and the route alike', async () => {
    server = await startTestServer({ rateLimit: '100' });
    const address = await uploadAddress(server);
    const checks = vi.spyOn(UrlSigner.prototype, 'check');
    try {
      expect((await fetch(address, { method: 'PUT', body: 'signed bytes' })).status).toBe(200);
      const forged = new URL(address);
      forged.searchParams.set('signature', '0'.repeat(64));
      expect((await fetch(forged, { method: 'PUT', body: 'forged bytes' })).status).toBe(403);
      expect(checks).toHaveBeenCalledTimes(2);
    } finally {
      checks.mockRestore();
    }
  });

  it('refuses malformed limit settings with a message naming the variable', () => {
    expect(() => loadServerConfig({ SDC_MAX_OBJECT_SIZE: '10GB' })).toThrow(/SDC_MAX_OBJECT_SIZE must be a whole number/);
    expect(() => loadServerConfig({ SDC_REQUIRE_KEYS: 'yes' })).toThrow(/SDC_REQUIRE_KEYS must be true or false/);
    expect(loadServerConfig({ SDC_RATE_LIMIT: '0', SDC_READ_NEEDS_KEY: 'true' })).toMatchObject({ rateLimit: 0, readNeedsKey: true });
  });
});
