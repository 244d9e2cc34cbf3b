import { request, type IncomingHttpHeaders } from 'node:http';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FEEDS_PER_ADDRESS } from '../../src/http/feed-route.js';
import { loggerInto } from '../helpers/log-lines.js';
import { DOCUMENTED_NGINX_LINES, HAVE_NGINX, NGINX_SKIPPED, startNginx, type Nginx } from '../helpers/nginx.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** Requests per minute per client in this test: small, so a limit is reached quickly. */
const LIMIT = 10;

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Ends the request (a feed stays open until then). */
  close(): void;
}

/**
 * A GET from a loopback address of the client's own (all of 127/8 is this host's), so nginx
 * sees distinct clients as it would on a network; the answer's status once its head arrives.
 */
function get(url: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, headers, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, headers: res.headers, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

// Behind a real nginx from Debian, configured as docs/self-hosted.md says, with SDC_TRUSTED_PROXIES
// naming it: logs, the per-address rate limit and the feed cap see each client, not the proxy.
describe.skipIf(!HAVE_NGINX)(HAVE_NGINX ? 'behind nginx with SDC_TRUSTED_PROXIES' : NGINX_SKIPPED, { timeout: 120_000 }, () => {
  let server: TestServer;
  let nginx: Nginx;
  const lines: string[] = [];
  beforeAll(async () => {
    server = await startTestServer({ trustedProxies: '127.0.0.1', rateLimit: String(LIMIT), eventsToken: 'the-events-token' }, {}, loggerInto(lines));
    nginx = await startNginx(server.url);
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.stop();
  });

  const accessLinesOf = (address: string) =>
    lines.map((l) => JSON.parse(l) as { msg?: string; req?: { url: string; remoteAddress?: string } }).filter((l) => l.msg === 'request' && l.req?.remoteAddress === address);

  it('logs each client address and limits each client alone; an X-Forwarded-For a client writes itself is not believed', async () => {
    const path = `${nginx.url}/query?instrument=swe`;
    for (let i = 0; i < LIMIT; i++) expect((await get(path, '127.0.0.2', { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(200);
    const limited = await get(path, '127.0.0.2', { 'x-forwarded-for': '198.51.100.99' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // Another client through the same proxy has its own budget.
    expect((await get(path, '127.0.0.3')).status).toBe(200);

    expect(accessLinesOf('127.0.0.2')).toHaveLength(LIMIT + 1);
    expect(accessLinesOf('127.0.0.3')).toHaveLength(1);
    expect(lines.some((l) => l.includes('203.0.113.') || l.includes('198.51.100.99'))).toBe(false);
  });

  it('a client that reaches the service directly, past the proxy, is its own address whatever it forwards', async () => {
    const direct = await get(`${server.url}/healthz`, '127.0.0.4', { 'x-forwarded-for': '127.0.0.3', forwarded: 'for=127.0.0.3' });
    expect(direct.status).toBe(200);
    expect(accessLinesOf('127.0.0.4').map((l) => l.req!.url)).toEqual(['/healthz']);
  });

  it(`caps live feeds per client (${MAX_FEEDS_PER_ADDRESS}), not for every client behind the proxy together`, async () => {
    const feeds: Answer[] = [];
    try {
      for (let i = 0; i < MAX_FEEDS_PER_ADDRESS; i++) feeds.push(await get(`${nginx.url}/events`, '127.0.0.5'));
      expect(feeds.map((f) => f.status)).toEqual(Array(MAX_FEEDS_PER_ADDRESS).fill(200));
      const refused = await get(`${nginx.url}/events`, '127.0.0.5');
      expect(refused.status).toBe(429);
      // The cap refused it, not the rate limit (which still had budget left).
      expect(Number(refused.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
      feeds.push(await get(`${nginx.url}/events`, '127.0.0.6'));
      expect(feeds.at(-1)!.status).toBe(200);
    } finally {
      for (const feed of feeds) feed.close();
    }
  });

  it("keeps the events token out of nginx's access log (the documented log_format) and out of ours", async () => {
    const posted = await new Promise<number>((resolve, reject) => {
      const req = request(`${nginx.url}/events/s3?token=the-events-token`, { method: 'POST', localAddress: '127.0.0.7', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ Event: 's3:TestEvent' }));
    });
    expect(posted).toBe(200);
    let log = '';
    for (let i = 0; i < 50 && !log.includes('/events/s3'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      log = await nginx.accessLog();
    }
    expect(log).toContain('127.0.0.7 - - [');
    expect(log).toContain('"POST /events/s3 HTTP/1.1" 200');
    expect(log).not.toContain('the-events-token');
    const ours = accessLinesOf('127.0.0.7');
    expect(ours.map((l) => l.req!.url)).toEqual(['/events/s3?token=[redacted]']);
  });

  it('runs with the lines docs/self-hosted.md shows', async () => {
    const page = await readFile(new URL('../../docs/self-hosted.md', import.meta.url), 'utf8');
    for (const line of DOCUMENTED_NGINX_LINES) expect(page, line).toContain(line);
  });
});
