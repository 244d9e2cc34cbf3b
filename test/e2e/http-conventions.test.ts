import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadServerConfig } from '../../src/config.js';
import { loggerInto } from '../helpers/log-lines.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const PACKAGE = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PORTAL = 'https://portal.example.org';

describe('HTTP conventions', () => {
  let server: TestServer;
  let base: string;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({}, {}, loggerInto(lines));
    base = server.url;
    expect((await uploadFile(base, SAMPLE_PATH, 'bytes')).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  describe('CORS (default origin *)', () => {
    it('allows any origin on every API route of both forms', async () => {
      for (const path of [`/query`, `/v0/query`, `/upload/${SAMPLE_NAME}`, `/download/${SAMPLE_NAME}`, `/v0/download/${SAMPLE_NAME}`, '/healthz', '/nope']) {
        const res = await fetch(`${base}${path}`, { headers: { Origin: PORTAL }, redirect: 'manual' });
        await res.arrayBuffer();
        expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
        expect(res.headers.get('access-control-expose-headers'), path).toMatch(/x-request-id/i);
      }
    });

    it('answers a preflight OPTIONS', async () => {
      for (const path of ['/query', `/v0/upload/science/${SAMPLE_PATH}`, `/download/${SAMPLE_PATH}`]) {
        const res = await fetch(`${base}${path}`, {
          method: 'OPTIONS',
          headers: { Origin: PORTAL, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-request-id' },
        });
        expect(res.status, path).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-methods')).toContain('GET');
        expect(res.headers.get('access-control-max-age')).toBe('600');
      }
    });
  });

  describe('HEAD on download', () => {
    it('answers the redirect\'s status and headers without a body, in both forms', async () => {
      for (const path of [`/download/${SAMPLE_PATH}`, `/download/${SAMPLE_NAME}`, `/v0/download/${SAMPLE_NAME}`]) {
        const res = await fetch(`${base}${path}`, { method: 'HEAD', redirect: 'manual' });
        expect(res.status, path).toBe(302);
        expect(res.headers.get('location')).toMatch(new RegExp(`/store/${SAMPLE_PATH}\\?`));
        expect(await res.text()).toBe('');
      }
      const missing = await fetch(`${base}/download/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf`, { method: 'HEAD' });
      expect(missing.status).toBe(404);
      const followed = await fetch(`${base}/download/${SAMPLE_NAME}`, { method: 'HEAD' });
      expect(followed.status).toBe(200);
      expect(followed.headers.get('content-length')).toBe('5');
    });
  });

  describe('request ids', () => {
    it('are on every response: routes, errors, 404, 405, preflight, store, docs', async () => {
      const requests: [string, RequestInit?][] = [
        ['/query'],
        ['/query?color=red'],
        [`/upload/${SAMPLE_PATH}`],
        ['/nope'],
        ['/query', { method: 'POST' }],
        ['/query', { method: 'OPTIONS', headers: { Origin: PORTAL, 'Access-Control-Request-Method': 'GET' } }],
        ['/store/imap/x?expires=1&signature=00'],
        ['/openapi.json'],
        ['/healthz'],
        ['/download/%E0%A4%A'],
      ];
      const ids = new Set<string>();
      for (const [path, init] of requests) {
        const res = await fetch(`${base}${path}`, init);
        await res.arrayBuffer();
        const id = res.headers.get('x-request-id');
        expect(id, path).toMatch(UUID);
        ids.add(id!);
      }
      expect(ids.size).toBe(requests.length);
    });

    it('are on the answers Fastify gives before any route runs, which are plain text', async () => {
      const badUrl = await fetch(`${base}/download/%E0%A4%A`, { headers: { 'X-Request-Id': 'bad-url-1' } });
      expect(badUrl.status).toBe(400);
      expect(badUrl.headers.get('x-request-id')).toBe('bad-url-1');
      expect(badUrl.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await badUrl.text()).toBe('The path /download/%E0%A4%A is not valid percent-encoding. Encode each reserved or non-ASCII byte as %XX (UTF-8).');
    });

    it('keep the id a client or load balancer sent, when it is sane', async () => {
      const kept = await fetch(`${base}/healthz`, { headers: { 'X-Request-Id': 'lb-1234.abc_def:9' } });
      expect(kept.headers.get('x-request-id')).toBe('lb-1234.abc_def:9');
      for (const sent of ['has space', 'x'.repeat(129), 'new\u00e9line']) {
        const res = await fetch(`${base}/healthz`, { headers: { 'X-Request-Id': encodeURI(sent) === sent ? sent : encodeURIComponent(sent) } });
        expect(res.headers.get('x-request-id')).toMatch(UUID);
      }
    });

    it('are on the log lines of the request, the service\'s own lines included', async () => {
      const path = 'imap/mag/l1a/2024/01/imap_mag_l1a_sci_20240105_20240105_v00-01.cdf';
      const address = (await (await fetch(`${base}/upload/${path}`)).json()) as string;
      const put = await fetch(address, { method: 'PUT', body: 'mag', headers: { 'Content-Type': '', 'X-Request-Id': 'put-request-1' } });
      expect(put.status).toBe(200);
      expect(put.headers.get('x-request-id')).toBe('put-request-1');
      const entries = lines.map((l) => JSON.parse(l) as { reqId?: string; msg?: string; file_path?: string });
      const indexed = entries.find((e) => e.msg === 'indexed' && e.file_path === path);
      expect(indexed?.reqId).toBe('put-request-1');
      const ofRequest = entries.filter((e) => e.reqId === 'put-request-1').map((e) => e.msg);
      expect(ofRequest).toEqual(['indexed', 'request']); // one access line per request, after the service's own
    });
  });

  describe('health, readiness, version', () => {
    it('GET /healthz says the process is up', async () => {
      const res = await fetch(`${base}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    });

    it('GET /version names the running build', async () => {
      expect(await (await fetch(`${base}/version`)).json()).toEqual({ name: PACKAGE.name, version: PACKAGE.version });
    });

    it('GET /readyz is 200 while catalog and store answer', async () => {
      const res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', checks: { catalog: 'ok', store: 'ok' }, backlog: { uploads: 0, oldest_seconds: 0 }, space: expect.objectContaining({ low: false }) as unknown });
    });
  });

  describe('unknown routes and wrong methods', () => {
    it('answer 404 with the list of endpoints, the whole OpenAPI description\'s', async () => {
      const res = await fetch(`${base}/nowhere/x?signature=secret`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(text).toMatch(/^Not found: GET \/nowhere\/x\. The endpoints are:\n/);
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, object> };
      for (const [path, item] of Object.entries(document.paths)) expect(text).toContain(`  ${Object.keys(item)[0]!.toUpperCase()} ${path}\n`);
      expect(text).toContain('GET /openapi.json');
      expect(text).toContain('GET /docs');
    });

    it('answer 405 with Allow for a known route asked with another method, whatever the body', async () => {
      for (const path of ['/query', '/events', `/upload/${SAMPLE_PATH}`, `/upload/science/${SAMPLE_PATH}`, `/download/${SAMPLE_NAME}`, '/v0/query', `/v0/upload/science/${SAMPLE_PATH}`, '/healthz', '/readyz', '/version']) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
          const res = await fetch(`${base}${path}`, { method, body: method === 'DELETE' ? undefined : '<x/>', headers: { 'Content-Type': 'application/xml' } });
          expect(res.status, `${method} ${path}`).toBe(405);
          expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
          expect(await res.text()).toBe(`Method ${method} is not allowed on ${path}. Allowed: GET, HEAD, OPTIONS.`);
        }
      }
      const store = await fetch(`${base}/store/${SAMPLE_PATH}`, { method: 'DELETE' });
      expect(store.status).toBe(405);
      expect(store.headers.get('allow')).toBe('GET, HEAD, OPTIONS, PUT');
    });
  });
});

describe('readiness when a backend fails', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  const readyz = async () => {
    const res = await fetch(`${server.url}/readyz`);
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it('is 503 naming the catalog while its table is gone, and ready again once it is back', async () => {
    const db = new Database(join(server.home, 'catalog.db'));
    try {
      db.exec('ALTER TABLE files RENAME TO files_away');
      expect(await readyz()).toEqual({ status: 503, body: { status: 'not ready', checks: { catalog: 'unreachable', store: 'ok' }, backlog: { uploads: 0, oldest_seconds: 0 }, space: expect.objectContaining({ low: false }) as unknown } });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      db.exec('ALTER TABLE files_away RENAME TO files');
      expect((await readyz()).status).toBe(200);
    } finally {
      db.close();
    }
  });

  // The local store is this instance's own (a shared S3 store is "degraded" instead: test/faults/).
  it('is 503 naming the store while its folder cannot be used', async () => {
    const root = join(server.home, 'store');
    await mkdir(root, { recursive: true });
    await rename(root, `${root}.away`);
    await writeFile(root, 'not a folder');
    try {
      expect(await readyz()).toEqual({ status: 503, body: { status: 'not ready', checks: { catalog: 'ok', store: 'unreachable' }, backlog: { uploads: 0, oldest_seconds: 0 }, space: expect.objectContaining({ low: false }) as unknown } });
    } finally {
      await rm(root);
      await rename(`${root}.away`, root);
    }
    expect((await readyz()).status).toBe(200);
  });
});

describe('CORS narrowed by SDC_CORS_ORIGIN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, { SDC_CORS_ORIGIN: `${PORTAL}, http://localhost:5173` });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('allows the listed origins only, on query answers too', async () => {
    for (const path of ['/query', '/v0/query', '/healthz']) {
      const allowed = await fetch(`${server.url}${path}`, { headers: { Origin: PORTAL } });
      expect(allowed.headers.get('access-control-allow-origin'), path).toBe(PORTAL);
      expect(allowed.headers.get('vary')).toMatch(/Origin/);
      const other = await fetch(`${server.url}${path}`, { headers: { Origin: 'https://elsewhere.example.com' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin'), path).toBeNull();
    }
    // The live feed writes its own head: it follows the policy too, and says its request id.
    const abort = new AbortController();
    const feed = await fetch(`${server.url}/events`, { headers: { Origin: PORTAL, 'X-Request-Id': 'feed-1' }, signal: abort.signal });
    expect(feed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(feed.headers.get('access-control-allow-origin')).toBe(PORTAL);
    expect(feed.headers.get('x-request-id')).toBe('feed-1');
    abort.abort();

    const preflight = await fetch(`${server.url}/query`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('is checked when the server starts', () => {
    expect(loadServerConfig({}).corsOrigin).toBe('*');
    expect(loadServerConfig({ SDC_CORS_ORIGIN: `${PORTAL}/` }).corsOrigin).toEqual([PORTAL]);
    expect(loadServerConfig({}, { corsOrigin: 'http://a.example:8080,https://b.example' }).corsOrigin).toEqual(['http://a.example:8080', 'https://b.example']);
    for (const bad of ['portal.example.org', 'https://a.example/path', 'https://a.example,,https://b.example', 'ftp://a.example']) {
      expect(() => loadServerConfig({ SDC_CORS_ORIGIN: bad }), bad).toThrow(ConfigError);
    }
  });
});
