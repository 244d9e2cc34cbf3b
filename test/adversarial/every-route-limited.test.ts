import { request as httpRequest } from 'node:http';
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
  // CORS answers preflights in its own hook, before any budget (docs/trust.md "Rate limit").
  // preflight: { method: 'OPTIONS', path: '/query', headers: { Origin: 'https://portal.example.org', 'Access-Control-Request-Method': 'GET' } },
  health: { method: 'GET', path: '/healthz', headers: {} },
} as const;

/** One request from the given loopback address (127.0.0.0/8 is all ours), answered status. */
function statusFrom(base: string, localAddress: string, kind: (typeof KINDS)[keyof typeof KINDS]): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: kind.method, path: kind.path, headers: kind.headers, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('every route spends the rate-limit budget; nothing anonymous counts the archive each time', () => {
  let server: TestServer;
  let address = 0;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: String(BUDGET) });
  });
  afterAll(() => server?.stop());

  it('any mix of metrics, API description, docs, 404, 405 and health answers 429 past the budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...(Object.keys(KINDS) as (keyof typeof KINDS)[])), { minLength: BUDGET + 1, maxLength: BUDGET + 6 }), async (kinds) => {
        // A fresh client address per case: a budget of its own.
        address++;
        const from = `127.0.${Math.floor(address / 250) + 1}.${(address % 250) + 2}`;
        const statuses: number[] = [];
        for (const kind of kinds) statuses.push(await statusFrom(server.url, from, KINDS[kind]));
        expect(statuses.slice(0, BUDGET).every((s) => s !== 429), JSON.stringify([kinds, statuses])).toBe(true);
        expect(statuses.slice(BUDGET).every((s) => s === 429), JSON.stringify([kinds, statuses])).toBe(true);
      }),
      { numRuns: GENERATED_CASES },
    );
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
      address++;
      const status = await statusFrom(server.url, `127.0.${Math.floor(address / 250) + 1}.${(address % 250) + 2}`, KINDS.metrics);
      if (status === 200) scrapes++;
    }
    expect(scrapes).toBe(30);
    expect(counts).toBeLessThanOrEqual(1);
    recordFigures('every-route-limited', { budget: BUDGET, cases: GENERATED_CASES, scrapes, catalog_counts: counts });
  });
});
