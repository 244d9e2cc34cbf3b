import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeAccess, type AccessClass, type AccessEntry } from '../../src/http/route-access.js';
import { rawGet } from '../helpers/raw-http.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/** Generated respellings tried on the key-protected routes: more under `npm run reliability`. */
const GENERATED_SPELLINGS = scale(300, 3000);

/** A concrete request target for a route pattern: its wildcard filled with a real stored path. */
function targetOf(url: string): string {
  return url.replace(/\*$/, url.includes('download') ? SAMPLE_NAME : SAMPLE_PATH).replace(/\?.*$/, '');
}

/** Each byte of the fixed part of a path (the route's own words) percent-encoded: `/%75%70...`. */
function encodeEvery(path: string, upTo: number): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    out += i < upTo && c !== '/' ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c;
  }
  return out;
}

/**
 * Ways of writing the same request target that a router decodes to the same route:
 * the key check must see them all as that route.
 */
function spellings(base: string, url: string): string[] {
  const target = targetOf(url);
  const fixed = url.replace(/\*$/, '').length;
  const firstLetter = target.replace(/^\/(v0\/)?([a-z])/, (_m, v0: string | undefined, c: string) => `/${v0 ?? ''}%${c.charCodeAt(0).toString(16)}`);
  return [
    target,
    firstLetter,
    firstLetter.replace(/%([0-9a-f]{2})/, (_m, hex: string) => `%${hex.toUpperCase()}`),
    encodeEvery(target, fixed),
    `${base}${target}`,
    `${base}${firstLetter}`,
    `${target}${target.includes('?') ? '&' : '?'}x=1`,
  ];
}

/** How docs/trust.md writes a route: the API's wildcards named, the swagger page's routes as one. */
function documentedUrl(url: string): string {
  if (url.startsWith('/docs')) return '/docs/*';
  if (url.startsWith('/store/')) return url.replace(/\*$/, '{key}');
  if (url.startsWith('/releases/')) return url.replace(':n', '{n}');
  return /^\/(v0\/)?(uploads?|download|withdraw)\//.test(url) ? url.replace(/\*$/, '{path}') : url;
}

const routesOf = (table: readonly AccessEntry[], access: AccessClass, method = 'GET') =>
  [...new Set(table.filter((r) => r.access === access && r.method === method).map((r) => r.url))];

describe('access is decided on the matched route, whatever the spelling of the URL', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ readNeedsKey: 'true', rateLimit: '0' });
    key = (await server.ctx.catalog.keys().create('alpha')).key;
    // One stored file, so download and query have something to give away.
    const address = (await (await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).json()) as string;
    expect((await fetch(address, { method: 'PUT', body: 'secret bytes', headers: { 'Content-Type': '' } })).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('every route declares a class, and the key-protected ones are the ones expected', () => {
    const table = server.app.accessTable();
    expect(table.length).toBeGreaterThan(20);
    for (const entry of table) expect(['public', 'read', 'upload', 'curator', 'signed', 'operator']).toContain(entry.access);
    expect(routesOf(table, 'curator', 'POST').sort()).toEqual(['/releases', '/releases/:n/retract', '/withdraw', '/withdraw/*']);
    expect(routesOf(table, 'upload').sort()).toEqual(['/upload', '/upload/*', '/upload/science/*', '/uploads/*', '/v0/upload/science', '/v0/upload/science/*']);
    expect(routesOf(table, 'upload', 'POST')).toEqual(['/uploads/*']);
    expect(routesOf(table, 'upload', 'DELETE')).toEqual(['/uploads/*']);
    expect(routesOf(table, 'read')).toEqual(
      expect.arrayContaining(['/query', '/download/*', '/events', '/coverage', '/metrics', '/v0/query', '/v0/download/*']),
    );
    expect(routesOf(table, 'signed', 'PUT')).toEqual(['/store/*']);
    expect(routesOf(table, 'operator', 'POST')).toEqual(['/events/s3']);
  });

  it('docs/trust.md lists every route with the class the server gives it', () => {
    const documented = new Set(
      [...readFileSync(new URL('../../docs/trust.md', import.meta.url), 'utf8').matchAll(/^\| `([A-Z]+) ([^`]+)` \| (\w+) \|/gm)].map(
        ([, method, url, access]) => `${method} ${url} ${access}`,
      ),
    );
    const served = new Set(
      server.app
        .accessTable()
        // HEAD follows GET; other methods on known URLs are the 405 answers.
        .filter((r) => r.method !== 'HEAD' && !(r.access === 'public' && ['DELETE', 'PATCH', 'POST', 'PUT'].includes(r.method)))
        .map((r) => `${r.method} ${documentedUrl(r.url)} ${r.access}`),
    );
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it('upload and read routes answer 401 without a key in every spelling, and never hand anything out', async () => {
    const table = server.app.accessTable();
    const routes = [...routesOf(table, 'upload'), ...routesOf(table, 'read')];
    let tried = 0;
    for (const url of routes) {
      for (const target of spellings(server.url, url)) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await rawGet(server.url, target, { 'Last-Event-ID': '0' }, method);
          expect({ method, target, status: answer.status }).toEqual({ method, target, status: 401 });
          expect(answer.body).not.toContain('secret bytes');
          expect(answer.body).not.toContain('/store/');
          tried++;
        }
      }
    }
    recordFigures('access', { protectedRoutes: routes.length, spellingsTried: tried, generatedSpellings: GENERATED_SPELLINGS, opened: 0 });
  });

  it('a wrong key is refused (403) in every spelling too; the right key opens each route', async () => {
    const table = server.app.accessTable();
    for (const url of [...routesOf(table, 'upload'), ...routesOf(table, 'read')]) {
      for (const target of spellings(server.url, url).slice(0, 5)) {
        const wrong = await rawGet(server.url, target, { 'X-API-Key': `${key}x` });
        expect({ target, status: wrong.status }).toEqual({ target, status: 403 });
      }
      if (url === '/events') continue; // a feed does not end; its HEAD shows it opens
      const right = await rawGet(server.url, targetOf(url), { 'X-API-Key': key });
      expect({ url, status: right.status }).not.toEqual({ url, status: 401 });
      expect(right.status).not.toBe(403);
    }
    const head = await rawGet(server.url, '/%65vents', { 'X-API-Key': key }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/event-stream/);
  });

  it('no mix of escaped and plain bytes, dot segments or doubled slashes opens a protected route (property)', async () => {
    const table = server.app.accessTable();
    const targets = [...routesOf(table, 'upload'), ...routesOf(table, 'read')].map(targetOf);
    const respell = fc
      .record({
        target: fc.constantFrom(...targets),
        escaped: fc.array(fc.boolean(), { minLength: 120, maxLength: 120 }),
        upper: fc.boolean(),
        decoration: fc.constantFrom('', '/.', '//', '/x/..', '/%2e', '/%2E%2E/upload', '%2F', '?', '#'),
        absolute: fc.boolean(),
      })
      .map(({ target, escaped, upper, decoration, absolute }) => {
        let out = '';
        for (let i = 0; i < target.length; i++) {
          const c = target[i]!;
          const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
          out += escaped[i % escaped.length] && c !== '/' && c !== '?' ? `%${upper ? hex.toUpperCase() : hex}` : c;
        }
        const slash = out.indexOf('/', 1);
        const decorated = decoration === '' || slash < 0 ? out : out.slice(0, slash) + decoration + out.slice(slash);
        return absolute ? `${server.url}${decorated}` : decorated;
      });
    await fc.assert(
      fc.asyncProperty(respell, async (target) => {
        const answer = await rawGet(server.url, target);
        expect([400, 401, 404]).toContain(answer.status);
        expect(answer.body).not.toContain('secret bytes');
        expect(answer.body).not.toContain('/store/');
      }),
      { numRuns: GENERATED_SPELLINGS },
    );
  });

  it('/coverage keeps file names and spans to key holders', async () => {
    for (const target of ['/coverage', `/coverage?file_path=${SAMPLE_NAME}`, '/%63overage?instrument=swe']) {
      const answer = await rawGet(server.url, target);
      expect(answer.status).toBe(401);
      expect(answer.body).not.toContain('swe');
    }
  });

  it('public routes answer without a key; signed addresses need their signature, not a key', async () => {
    for (const target of ['/healthz', '/readyz', '/version', '/openapi.json', '/%68ealthz']) {
      expect((await rawGet(server.url, target)).status).toBe(200);
    }
    const unsigned = await rawGet(server.url, `/store/${SAMPLE_PATH}`);
    expect(unsigned.status).toBe(403);
    expect(unsigned.body).not.toContain('secret bytes');
    const forged = await rawGet(server.url, `/%73tore/${SAMPLE_PATH}?expires=99999999999&signature=${'0'.repeat(64)}`);
    expect(forged.status).toBe(403);
  });
});

describe('a route without an access class', () => {
  it('keeps the app from starting, naming the route', async () => {
    const app = Fastify();
    routeAccess(app);
    app.get('/declared', { config: { access: 'public' } }, async () => 'ok');
    app.get('/forgotten', async () => 'oops');
    await expect(app.ready()).rejects.toThrow(/GET \/forgotten/);
    await app.close().catch(() => undefined);
  });
});

describe('the rate limit counts per verified key, else per address', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: '10' });
    key = (await server.ctx.catalog.keys().create('beta')).key;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('invented keys share their sender address budget: key guessing gets 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const invented = `sdc_${i.toString(16).padStart(16, '0')}_${'A'.repeat(43)}`;
      statuses.push((await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': invented } })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403));
    expect(statuses.slice(10)).toEqual(Array(4).fill(429));
    // Keyless requests from the same address share that spent budget.
    expect((await fetch(`${server.url}/query`)).status).toBe(429);
    // A verified key has a budget of its own.
    expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).status).toBe(200);
  });
});

describe('uploads are open while no key exists', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('and the percent-encoded spelling records the same (no) uploader as the plain one', async () => {
    expect((await uploadFile(server.url, SAMPLE_PATH, 'open')).status).toBe(200);
    const answer = await rawGet(server.url, `/%75pload/${SAMPLE_PATH}`);
    expect(answer.status).toBe(409);
  });
});
