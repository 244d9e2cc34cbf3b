import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { ALL_QUERY_PARAMETERS, parseQueryFilter } from '../../src/catalog/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

/** What the issue asks the document to describe: both forms and the operational endpoints. */
const EXPECTED: Record<string, { statuses: string[]; params: 'path' | 'upload' | 'query' | 'filters' | 'coverage' | 'changes' | 'bearer' | 'none'; method?: string }> = {
  '/upload/{path}': { statuses: ['200', '400', '401', '403', '409', '429'], params: 'upload' },
  '/upload/science/{path}': { statuses: ['200', '400', '401', '403', '409', '429'], params: 'upload' },
  '/download/{path}': { statuses: ['302', '400', '403', '404', '409', '410'], params: 'path' },
  '/query': { statuses: ['200', '400', '404'], params: 'query' },
  '/v0/upload/science/{path}': { statuses: ['200', '400', '401', '403', '409', '429'], params: 'path' },
  '/v0/download/{path}': { statuses: ['302', '400', '404', '409'], params: 'path' },
  '/v0/query': { statuses: ['200', '400', '404'], params: 'query' },
  '/events': { statuses: ['200', '400', '429', '503'], params: 'filters' },
  '/coverage': { statuses: ['200', '400'], params: 'coverage' },
  '/changes': { statuses: ['200', '400'], params: 'changes' },
  '/healthz': { statuses: ['200'], params: 'none' },
  '/readyz': { statuses: ['200', '503'], params: 'none' },
  '/version': { statuses: ['200'], params: 'none' },
  '/auth/config': { statuses: ['200'], params: 'none' },
  '/auth/whoami': { statuses: ['200'], params: 'none' },
  '/events/s3': { statuses: ['200', '400', '401', '403'], params: 'bearer', method: 'post' },
  '/withdraw/{path}': { statuses: ['200', '400', '401', '403', '404', '409'], params: 'path', method: 'post' },
};

/** Numbered releases (docs/api.md "Releases"): a path may take two methods, each with its statuses. */
const RELEASE_PATHS: Record<string, Record<string, string[]>> = {
  '/releases': { get: ['200'], post: ['200', '201', '400', '401', '403'] },
  '/releases/{n}': { get: ['200', '400', '404'] },
  '/releases/{n}/retract': { post: ['200', '400', '401', '403', '404', '409'] },
};

describe('the OpenAPI description', () => {
  let server: TestServer;
  let document: Document;

  beforeAll(async () => {
    server = await startTestServer();
    const res = await fetch(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    document = (await res.json()) as Document;
  });
  afterAll(async () => {
    await server.stop();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.openapi).toBe('3.1.0');
  });

  it('is checked by a validator that refuses a broken document', async () => {
    const broken = structuredClone(document);
    broken.paths['/query']!.get!.responses = {};
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('describes both forms and the operational endpoints: every parameter and status', () => {
    expect(Object.keys(document.paths).sort()).toEqual([...Object.keys(EXPECTED), ...Object.keys(RELEASE_PATHS)].sort());
    for (const [path, methods] of Object.entries(RELEASE_PATHS)) {
      expect(Object.keys(document.paths[path]!).sort(), path).toEqual(Object.keys(methods).sort());
      for (const [method, statuses] of Object.entries(methods)) {
        const operation = document.paths[path]![method]!;
        expect(Object.keys(operation.responses).sort(), `${method} ${path}`).toEqual(statuses);
        for (const response of Object.values(operation.responses)) expect(response.content, path).toBeDefined();
        if (path !== '/releases') expect(operation.parameters?.find((p) => p.in === 'path'), path).toMatchObject({ name: 'n', required: true });
      }
    }
    expect(Object.keys(document.paths['/releases/{n}']!.get!.responses['200']!.content!)).toEqual(['application/json', 'text/csv; charset=utf-8', 'application/metalink4+xml', 'application/vnd.datacite.datacite+json']);
    const ids = new Set<string>();
    for (const [path, expected] of Object.entries(EXPECTED)) {
      const method = expected.method ?? 'get';
      const get = document.paths[path]![method]!;
      expect(Object.keys(document.paths[path]!), path).toEqual([method]);
      expect(ids.has(get.operationId), `${path}: operationId unique`).toBe(false);
      ids.add(get.operationId);
      expect(Object.keys(get.responses).sort(), path).toEqual(expected.statuses);
      for (const response of Object.values(get.responses)) {
        expect(response.headers?.['x-request-id'], path).toBeDefined();
        expect(response.content, path).toBeDefined();
      }
      const params = get.parameters ?? [];
      if (expected.params === 'path') {
        // The current form's download also takes ?withdrawn=include (docs/api.md "Withdrawn files").
        const others = path === '/download/{path}' ? [{ name: 'withdrawn', in: 'query', required: false }] : [];
        expect(params).toMatchObject([...others, { name: 'path', in: 'path', required: true }]);
      }
      // The current form's upload also takes the file's declared SHA-256 (docs/api.md, "Checked transfers").
      if (expected.params === 'upload') {
        expect(params.map((p) => [p.name, p.in, p.required])).toEqual([['sha256', 'query', false], ['path', 'path', true]]);
      }
      if (expected.params === 'query') {
        expect(params.map((p) => p.name)).toEqual([...ALL_QUERY_PARAMETERS]);
        expect(params.every((p) => p.in === 'query' && !p.required)).toBe(true);
      }
      if (expected.params === 'filters') {
        const filters = ALL_QUERY_PARAMETERS.filter((p) => !['limit', 'cursor', 'sort', 'format'].includes(p));
        expect(params.map((p) => `${p.in}:${p.name}`)).toEqual([...filters.map((f) => `query:${f}`), 'header:last-event-id']);
      }
      if (expected.params === 'coverage') {
        const filters = ALL_QUERY_PARAMETERS.filter((p) => !['limit', 'cursor', 'sort', 'format'].includes(p));
        expect(params.map((p) => `${p.in}:${p.name}`).sort()).toEqual(filters.map((f) => `query:${f}`).sort());
      }
      if (expected.params === 'changes') expect(params.map((p) => `${p.in}:${p.name}`)).toEqual(['query:after', 'query:limit']);
      // The events token as a Bearer header or, for stores that cannot send one, in the URL.
      if (expected.params === 'bearer') expect(params.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['header:authorization', 'query:token']);
      if (expected.params === 'none') expect(params).toEqual([]);
    }
    expect(document.paths['/download/{path}']!.get!.responses['302']!.headers).toHaveProperty('Location');
    expect(document.paths['/query']!.get!.responses['200']!.content).toMatchObject({
      'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/FileRecord' } } },
      'text/csv; charset=utf-8': {},
      'application/x-ndjson': {},
      'application/metalink4+xml': {},
    });
    expect(document.paths['/v0/query']!.get!.responses['200']!.content).toHaveProperty('application/metalink4+xml');
    expect(Object.keys(document.paths['/query']!.get!.responses['200']!.headers!)).toEqual(
      expect.arrayContaining(['Access-Control-Allow-Origin', 'X-Total-Count', 'X-Next-Cursor', 'Link']),
    );
  });

  it('is generated from the routes: every path it names is a route the server has', () => {
    for (const path of Object.keys(document.paths)) {
      for (const name of Object.keys(document.paths[path]!)) {
        const method = name.toUpperCase() as 'GET' | 'POST';
        expect(server.app.hasRoute({ method, url: path.replace('{path}', '*').replace('{n}', ':n') }), path).toBe(true);
      }
    }
  });

  it('is the document the /docs page loads, from assets this server serves itself', async () => {
    const json = await fetch(`${server.url}/docs/json`);
    expect(await json.json()).toEqual(document);

    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.some((a) => a.endsWith('swagger-ui-bundle.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('swagger-initializer.js'))).toBe(true);
    for (const asset of assets) {
      const res = await fetch(new URL(asset, `${server.url}/docs`));
      expect(res.status, asset).toBe(200);
      const body = await res.text();
      if (asset.endsWith('swagger-initializer.js')) {
        expect(body).toContain("resolveUrl('./json')");
        expect(body).toContain('validatorUrl: null');
      }
    }
  });

  it('answers a request its schema refuses with the spec\'s message, never the framework\'s', async () => {
    const cases = [
      'instrument=nope',
      'data_level=l9',
      'extension=txt',
      'instrument=swe&instrument=mag',
      'color=red',
      'start_date=20241301',
      'sort=size',
      'overlap=yes',
      'limit=0',
      'version=v1',
    ];
    for (const query of cases) {
      const expected = parseQueryFilter(new URLSearchParams(query), IMAP_MISSION);
      expect(expected.ok).toBe(false);
      for (const prefix of ['', '/v0']) {
        const res = await fetch(`${server.url}${prefix}/query?${query}`);
        expect(res.status, query).toBe(400);
        const body = (await res.json()) as string;
        expect(body).toBe(expected.ok ? '' : expected.message);
        expect(body).not.toMatch(/must be|querystring\//);
      }
    }
    const feed = await fetch(`${server.url}/events?instrument=nope`);
    expect(feed.status).toBe(400);
    const expected = parseQueryFilter([['instrument', 'nope']], IMAP_MISSION);
    expect(await feed.text()).toBe(expected.ok ? '' : expected.message);
  });
});
