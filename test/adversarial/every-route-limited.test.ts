import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigures, scale } from '../reliability/figures.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const GENERATED_CASES = scale(25, 200);
const BUDGET = 4;

/** Requests that touch no data: each must spend the sender's budget all the same. */
const KINDS = {
  metrics: { method: 'GET', path: '/metrics', headers: {} },
  openapi: { method: 'GET', path: '/openapi.json', headers: {} },
  docs: { method: 'GET', path: '/docs/', headers: {} },
  notFound: { method: 'GET', path: '/no/such/place', headers: {} },
  wrongMethod: { method: 'DELETE', path: '/query', headers: {} },
  preflight: { method: 'OPTIONS', path: '/query', headers: { Origin: 'https://portal.example.org', 'Access-Control-Request-Method': 'GET' } },
  health: { method: 'GET', path: '/healthz', headers: {} },
} as const;

interface Kind {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
}

/** One request from the given loopback address (127.0.0.0/8 is all ours): its status and headers. */
function answerFrom(base: string, localAddress: string, kind: Kind): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: kind.method, path: kind.path, headers: kind.headers, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function statusFrom(base: string, localAddress: string, kind: Kind): Promise<number> {
  return (await answerFrom(base, localAddress, kind)).status;
}

/** A loopback address not used before in this file: a budget of its own. */
function freshAddress(n: number): string {
  return `127.0.${Math.floor(n / 250) + 1}.${(n % 250) + 2}`;
}

/** A browser's preflight for any method and path, with or without asked-for headers. */
const preflight = fc.record({
  path: fc.constantFrom('/query', '/query?instrument=swe', '/upload/imap/swe/l1a/2024/01/x.cdf', '/download/imap/a.cdf', '/events', '/metrics', '/no/such/place'),
  method: fc.constantFrom('GET', 'HEAD', 'PUT', 'POST', 'DELETE'),
  origin: fc.constantFrom('https://portal.example.org', 'http://localhost:5173', 'https://elsewhere.example'),
  asks: fc.option(fc.constantFrom('x-api-key', 'content-type', 'x-api-key, range'), { nil: undefined }),
});

describe('every route spends the rate-limit budget; nothing anonymous counts the archive each time', () => {
  let server: TestServer;
  let address = 0;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: String(BUDGET) });
  });
  afterAll(() => server?.stop());

  it('any mix of metrics, API description, docs, CORS preflights, 404, 405 and health answers 429 past the budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...(Object.keys(KINDS) as (keyof typeof KINDS)[])), { minLength: BUDGET + 1, maxLength: BUDGET + 6 }), async (kinds) => {
        // A fresh client address per case: a budget of its own.
        const from = freshAddress(++address);
        const statuses: number[] = [];
        for (const kind of kinds) statuses.push(await statusFrom(server.url, from, KINDS[kind]));
        expect(statuses.slice(0, BUDGET).every((s) => s !== 429), JSON.stringify([kinds, statuses])).toBe(true);
        expect(statuses.slice(BUDGET).every((s) => s === 429), JSON.stringify([kinds, statuses])).toBe(true);
      }),
      { numRuns: GENERATED_CASES },
    );
  }, 120_000);

  it('CORS preflights spend the budget too, and the 429 past it carries the CORS headers and Retry-After', async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(preflight, { minLength: BUDGET + 1, maxLength: BUDGET + 4 }), async (asked) => {
        const from = freshAddress(++address);
        for (const [i, p] of asked.entries()) {
          const headers: Record<string, string> = { Origin: p.origin, 'Access-Control-Request-Method': p.method, ...(p.asks ? { 'Access-Control-Request-Headers': p.asks } : {}) };
          const answer = await answerFrom(server.url, from, { method: 'OPTIONS', path: p.path, headers });
          const seen = JSON.stringify([i, p, answer.status, answer.headers]);
          // CORS is `*` by default: every answer, a refusal included, may be read by any page.
          expect(answer.headers['access-control-allow-origin'], seen).toBe('*');
          if (i < BUDGET) {
            expect(answer.status, seen).toBe(204);
            expect(answer.headers['access-control-allow-methods'], seen).toBe('GET, HEAD, PUT');
            expect(answer.headers['x-ratelimit-remaining'], seen).toBe(String(BUDGET - 1 - i));
          } else {
            expect(answer.status, seen).toBe(429);
            expect(Number(answer.headers['retry-after']), seen).toBeGreaterThan(0);
            expect(answer.headers['access-control-expose-headers'], seen).toMatch(/X-Error-Code/i);
            refused++;
          }
        }
      }),
      { numRuns: GENERATED_CASES },
    );
    recordFigures('every-route-limited-preflights', { budget: BUDGET, cases: GENERATED_CASES, refused });
  }, 120_000);

  it('/metrics counts the catalog at most once a minute however often it is scraped', async () => {
    const catalog = server.ctx.catalog;
    const count = catalog.count.bind(catalog);
    let counts = 0;
    catalog.count = ((...args: Parameters<typeof count>) => {
      counts++;
      return count(...args);
    }) as typeof catalog.count;
    let scrapes = 0;
    for (let i = 0; i < 30; i++) {
      const status = await statusFrom(server.url, freshAddress(++address), KINDS.metrics);
      if (status === 200) scrapes++;
    }
    expect(scrapes).toBe(30);
    expect(counts).toBeLessThanOrEqual(1);
    recordFigures('every-route-limited', { budget: BUDGET, cases: GENERATED_CASES, scrapes, catalog_counts: counts });
  });
});
