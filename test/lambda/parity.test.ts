import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApiHandler, lambdaAppFromEnvironment, type ApiEvent } from '../../src/lambda/api-handler.js';
import { FEED_NOT_SERVED } from '../../src/lambda/feed-not-served.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { ingest } from '../../src/service/index.js';
import type { S3ObjectStore } from '../../src/store/s3/s3-object-store.js';
import { ensurePortal } from '../helpers/lazy-build.js';
import { signingKey, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { deviceSignIn } from '../helpers/oidc-sign-in.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import type { ServerSettings } from '../../src/config.js';
import { fixture } from './lambda-events.js';

// The portal's assets as the sources are now (web/build.js runs only when web/ or src/ changed).
await ensurePortal();

/**
 * The same requests to `sdc serve` (a real server on loopback) and to the Lambda handler
 * (API Gateway REST API v1 and HTTP API v2 events, from the fixtures of real events), both
 * on the same S3 bucket (s3rver) and PostgreSQL schema: status, the headers that matter
 * and the bodies must be the same. Signatures and request ids differ by nature and are
 * compared by shape only.
 */

const STORED = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const STORED_NAME = STORED.split('/').pop()!;
const OTHER = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
const NEW = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
/** A file a fixity audit found damaged (docs/api.md "Damaged files"). */
const DAMAGED = 'imap/hit/l2/2024/03/imap_hit_l2_burst_20240301_20240302_v01-00.cdf';

interface Case {
  readonly method: string;
  /** As a client sends it: percent-encoded, with its query. */
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** `compare` = everything but the body's variable parts; `status` = status and content type only (per-process counters). */
  readonly compare?: 'all' | 'status';
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** Differ by nature between two processes or two requests: compared by presence only. */
const BY_PRESENCE = ['x-request-id'];
/** Belong to the connection or the clock. */
const IGNORED = ['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/** Each upload address names a staging key of its own (.staging/<key>/<24 hex>): random by design. */
const STAGING_ID = /\/[0-9a-f]{24}\?/g;
const SIGNED = /\?(X-Amz-[^"\s>]*)/g;

function normalise(answer: Answer, base: string): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (IGNORED.includes(name)) continue;
    // The server's next-page link is relative (no SDC_PUBLIC_URL); the Lambda's is under the gateway's base.
    headers[name] = BY_PRESENCE.includes(name) ? '<present>' : value.replace(STAGING_ID, '/<staging id>?').replace(SIGNED, '?<signed>').split(`<${base}/`).join('<BASE/').replace(/^<\//, '<BASE/');
  }
  const text = answer.body.toString('utf8');
  return { status: answer.status, headers, body: /[\uFFFD]/.test(text) ? answer.body.toString('base64') : text.replace(STAGING_ID, '/<staging id>?').replace(SIGNED, '?<signed>') };
}

/**
 * The one difference, by design (docs/deploy-aws.md): Lambda cannot serve the live feed, so
 * its API description and its 404's list of endpoints leave GET /events out.
 */
function onLambda(view: ReturnType<typeof normalise>): ReturnType<typeof normalise> {
  if (view.headers['content-type']?.startsWith('application/json') && view.body.startsWith('{"openapi"')) {
    const document = JSON.parse(view.body) as { paths: Record<string, unknown> };
    expect(document.paths['/events']).toBeDefined();
    delete document.paths['/events'];
    return { ...view, body: JSON.stringify(document) };
  }
  if (view.status === 404 && view.body.startsWith('Not found:')) {
    expect(view.body).toContain('\n  GET /events\n');
    return { ...view, body: view.body.replace('\n  GET /events\n', '\n') };
  }
  return view;
}

/**
 * `sdc serve` on loopback and the Lambda handler (from the environment, as Lambda builds it),
 * on one S3 bucket and PostgreSQL schema, started before the tests of the calling describe.
 */
function parityRig(settings: ServerSettings = {}, env: Record<string, string> = {}) {
  let backends: ProductionBackends;
  let server: TestServer;
  let lambda: (event: ApiEvent) => Promise<APIGatewayProxyResult>;
  let lambdaApp: ReturnType<typeof lambdaAppFromEnvironment>;
  const hit = new Set<string>();

  beforeAll(async () => {
    backends = await startProductionBackends();
    server = await startTestServer({ ...backends.settings, ...settings });
    // Keys as the server has them (startTestServer opts out of the fail-closed default unless asked).
    const requireKeys = settings.requireKeys ?? 'false';
    lambdaApp = lambdaAppFromEnvironment({ SDC_STORE: backends.settings.store, SDC_CATALOG: backends.settings.catalog, SDC_LOG_LEVEL: 'silent', SDC_REQUIRE_KEYS: requireKeys, ...env });
    const handle = makeApiHandler(lambdaApp);
    lambda = (event) => handle(event) as Promise<APIGatewayProxyResult>;
    // One file in the archive, stored straight into the bucket and indexed as the ingest function does.
    const store = server.ctx.store as S3ObjectStore;
    for (const path of [STORED, OTHER, DAMAGED]) {
      await store.client.send(new PutObjectCommand({ Bucket: backends.bucket, Key: path, Body: `bytes of ${path}` }));
      await ingest(server.ctx, path);
    }
    await server.ctx.catalog.recordFixity(DAMAGED, '2026-01-01T02:00:00.000Z', 'mismatch');
  });
  afterAll(async () => {
    if (lambdaApp) await (await lambdaApp()).close();
    await server?.stop();
    await backends?.stop();
  });

  async function viaServer(c: Case): Promise<Answer> {
    const res = await fetch(`${server.url}${c.url}`, { method: c.method, headers: c.headers, body: c.body, redirect: 'manual' });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => (headers[name] = value));
    return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  function split(url: string): { path: string; query: string } {
    const q = url.indexOf('?');
    return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
  }

  /** A REST API (v1) event as API Gateway sends it: decoded path and parameters, stage `prod`. */
  function v1(c: Case): APIGatewayProxyEvent {
    const event = fixture<APIGatewayProxyEvent>('apigw-v1-rest-event.json');
    const { path, query } = split(c.url);
    let decoded = path;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // API Gateway passes a malformed escape on as it came.
    }
    const params = new URLSearchParams(query);
    const names = [...new Set(params.keys())];
    event.httpMethod = c.method;
    event.path = decoded;
    event.pathParameters = { proxy: decoded.slice(1) };
    event.requestContext.httpMethod = c.method;
    event.requestContext.path = `/prod${decoded}`;
    event.queryStringParameters = names.length ? Object.fromEntries(names.map((n) => [n, params.getAll(n).at(-1)!])) : null;
    event.multiValueQueryStringParameters = names.length ? Object.fromEntries(names.map((n) => [n, params.getAll(n)])) : null;
    for (const [name, value] of Object.entries(c.headers ?? {})) {
      event.headers[name] = value;
      event.multiValueHeaders[name] = [value];
    }
    event.body = c.body ?? null;
    return event;
  }

  /** An HTTP API (v2) event as API Gateway sends it: raw path and query, `$default` stage. */
  function v2(c: Case): APIGatewayProxyEventV2 {
    const event = fixture<APIGatewayProxyEventV2>('apigw-v2-http-event.json');
    const { path, query } = split(c.url);
    const params = new URLSearchParams(query);
    event.rawPath = path;
    event.rawQueryString = query;
    event.requestContext.http.method = c.method;
    event.requestContext.http.path = path;
    event.queryStringParameters = query ? Object.fromEntries([...new Set(params.keys())].map((k) => [k, params.getAll(k).join(',')])) : undefined;
    for (const [name, value] of Object.entries(c.headers ?? {})) event.headers[name.toLowerCase()] = value;
    if (c.body !== undefined) {
      event.body = c.body;
      event.headers['content-length'] = String(Buffer.byteLength(c.body));
    }
    return event;
  }

  async function viaLambda(event: ApiEvent): Promise<Answer> {
    const result = await lambda(event);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name.toLowerCase()] = values.join(', ');
    return { status: result.statusCode, headers, body: Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') };
  }

  async function expectParity(cases: readonly Case[]): Promise<void> {
    for (const c of cases) {
      hit.add(`${c.method} ${split(c.url).path}`);
      const http = await viaServer(c);
      const serverView = onLambda(normalise(http, server.url));
      for (const [carrier, event, base] of [
        ['v1', v1(c), `https://abc123defg.execute-api.us-west-2.amazonaws.com/prod`],
        ['v2', v2(c), `https://xyz789abcd.execute-api.us-west-2.amazonaws.com`],
      ] as const) {
        const view = normalise(await viaLambda(event), base);
        const label = `${carrier} ${c.method} ${c.url}`;
        if (c.compare === 'status') {
          expect({ status: view.status, type: view.headers['content-type'] }, label).toEqual({
            status: serverView.status,
            type: serverView.headers['content-type'],
          });
        } else {
          expect(view, label).toEqual(serverView);
        }
      }
    }
  }

  return {
    hit,
    server: () => server,
    v1,
    v2,
    viaLambda,
    expectParity,
  };
}

const both = (method: string, url: string, extra: Omit<Case, 'method' | 'url'> = {}): Case[] => [
  { method, url, ...extra },
  { method: 'HEAD', url, ...extra },
];

describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`Lambda carrier and sdc serve answer alike (${PRODUCTION_BACKENDS_LABEL})`, () => {
  const { hit, server, v1, v2, viaLambda, expectParity } = parityRig();


  it('answers every operation of the API alike, good and bad input, GET and HEAD', async () => {
    await expectParity([
      // Upload addresses: new name, existing name (409), bad names, no path, the earlier alias.
      ...both('GET', `/upload/${NEW}`),
      ...both('GET', `/upload/${STORED}`),
      ...both('GET', '/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_2024_20240105_v00-01.cdf'),
      ...both('GET', '/upload'),
      ...both('GET', `/upload/science/${NEW}`),
      ...both('GET', `/upload/${NEW.replace('v01-00', 'v01%2D00')}`),
      // An address bound to a declared SHA-256, and one badly spelled (docs/api.md, "Checked transfers").
      ...both('GET', `/upload/${NEW}?sha256=${'ab'.repeat(32)}`),
      ...both('GET', `/upload/${NEW}?sha256=xyz`),
      // Downloads: by name and path, missing, bad, none.
      ...both('GET', `/download/${STORED_NAME}`),
      ...both('GET', `/download/${STORED}`),
      ...both('GET', `/download/${STORED_NAME.replace('v00-01', 'v00-09')}`),
      ...both('GET', '/download/imap/swe/l1a/'),
      ...both('GET', `/download/${DAMAGED}`),
      ...both('GET', `/v0/download/${DAMAGED}`),
      ...both('GET', '/download'),
      // Queries: formats, paging (Link), bad filters, repeated names.
      ...both('GET', '/query?instrument=swe'),
      ...both('GET', '/query?instrument=swe&limit=1'),
      ...both('GET', '/query?instrument=swe', { headers: { Accept: 'text/csv' } }),
      ...both('GET', '/query?instrument=swe&format=metalink&limit=1'),
      ...both('GET', '/query?instrument=swe&data_level=l2&format=metalink'),
      ...both('GET', '/query?colour=red'),
      ...both('GET', '/query?instrument=swe&instrument=mag'),
      ...both('GET', '/query?start_date=2024-01-01'),
      // The earlier form.
      ...both('GET', `/v0/upload/science/${NEW}`),
      ...both('GET', '/v0/upload/science/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v0-01.cdf'),
      ...both('GET', '/v0/upload/science'),
      ...both('GET', `/v0/download/${STORED}`),
      ...both('GET', '/v0/download/imap/swe/'),
      ...both('GET', '/v0/download'),
      ...both('GET', '/v0/query?instrument=swe'),
      ...both('GET', '/v0/query?instrument=swe&limit=1'),
      // Coverage.
      ...both('GET', '/coverage?instrument=swe'),
      ...both('GET', '/coverage?limit=3'),
      // The change log (docs/api.md "The change log").
      ...both('GET', '/changes'),
      ...both('GET', '/changes?after=0&limit=1'),
      ...both('GET', '/changes?after=1&limit=10000'),
      ...both('GET', '/changes?limit=0'),
      ...both('GET', '/changes?after=x'),
      ...both('GET', '/changes?instrument=swe'),
    ]);
  });

  it('answers uploads in parts alike: open, list, complete and abort, good and bad input', async () => {
    await expectParity([
      // Opening makes an upload of its own on each carrier: same status, different ids.
      { method: 'POST', url: `/uploads/${NEW}`, compare: 'status' },
      { method: 'POST', url: `/uploads/${STORED}` },
      { method: 'POST', url: '/uploads/imap/swe/l1a/2024/01/imap_swe_l1a_sci_2024_20240105_v00-01.cdf' },
      ...both('GET', `/uploads/${NEW}`),
      ...both('GET', `/uploads/${NEW}?uploadId=nope&parts=1`),
      { method: 'POST', url: `/uploads/${NEW}?uploadId=nope`, headers: { 'Content-Type': 'application/json' }, body: '{"parts":[]}' },
      { method: 'DELETE', url: `/uploads/${NEW}?uploadId=nope` },
      { method: 'PATCH', url: `/uploads/${NEW}` },
    ]);
  });

  it('answers the operations, the description, the portal and the unmatched alike', async () => {
    const asset = '/assets/portal.js';
    await expectParity([
      ...both('GET', '/healthz'),
      ...both('GET', '/readyz'),
      ...both('GET', '/version'),
      ...both('GET', '/openapi.json'),
      ...both('GET', '/'),
      ...both('GET', '/auth/callback?code=abc&state=xyz'),
      ...both('GET', asset),
      ...both('GET', '/docs'),
      ...both('GET', '/docs/'),
      ...both('GET', '/docs/json'),
      // The same document as /docs/json, in YAML (compared whole above, as JSON).
      ...both('GET', '/docs/yaml', { compare: 'status' }),
      ...both('GET', '/docs/static/index.html'),
      ...both('GET', '/docs/static/swagger-initializer.js'),
      ...both('GET', '/docs/static/favicon-32x32.png'),
      ...both('GET', '/metrics', { compare: 'status' }),
      // Not found, with the list of endpoints; a path that is not valid percent-encoding.
      ...both('GET', '/nowhere'),
      ...both('GET', '/query/extra'),
      ...both('GET', '/download/%E0%A4%A'),
      // The local store's addresses exist only with the local store: neither carrier has them on S3.
      ...both('GET', `/store/${STORED}`),
      // POST /events/s3: disabled without SDC_EVENTS_TOKEN, on both.
      { method: 'POST', url: '/events/s3', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer guess' }, body: '{"Records":[]}' },
    ]);
  });

  it('answers 405 with Allow for every URL asked with a method it does not serve, and CORS preflights', async () => {
    const urls = [
      '/', '/auth/callback', '/assets/portal.js', '/changes', '/coverage', '/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/index.html',
      '/docs/static/swagger-initializer.js', '/docs/static/favicon-32x32.png', `/download/${STORED}`, '/download', '/events',
      '/healthz', '/metrics', '/openapi.json', '/query', '/readyz', `/upload/${NEW}`, '/upload', `/upload/science/${NEW}`,
      `/v0/download/${STORED}`, '/v0/download', '/v0/query', `/v0/upload/science/${NEW}`, '/v0/upload/science', '/version',
    ];
    await expectParity([
      ...urls.map((url, i) => ({ method: ['DELETE', 'PATCH', 'POST', 'PUT'][i % 4]!, url })),
      { method: 'GET', url: '/events/s3' },
      { method: 'PUT', url: '/events/s3' },
      ...[`/upload/${NEW}`, '/query?instrument=swe', `/download/${STORED}`].map((url) => ({
        method: 'OPTIONS',
        url,
        headers: { Origin: 'https://portal.example.org', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
      })),
      ...both('GET', '/query?instrument=swe', { headers: { Origin: 'https://portal.example.org' } }),
    ]);
  });

  it('asks for keys alike once one exists: 401 without, 403 for a wrong or revoked one, the answer with a good one', async () => {
    const keys = server().ctx.catalog.keys();
    const { key } = await keys.create('swe-pipeline');
    const { key: old } = await keys.create('old-pipeline');
    await keys.revoke('old-pipeline');
    await expectParity([
      ...both('GET', `/upload/${NEW}`),
      ...both('GET', `/upload/${NEW}`, { headers: { 'X-API-Key': 'not-a-key' } }),
      ...both('GET', `/upload/${NEW}`, { headers: { 'X-API-Key': old } }),
      ...both('GET', `/upload/${NEW}`, { headers: { 'X-API-Key': key } }),
      ...both('GET', `/upload/${NEW}`, { headers: { Authorization: `Bearer ${key}` } }),
      ...both('GET', `/v0/upload/science/${NEW}`),
      ...both('GET', `/v0/upload/science/${NEW}`, { headers: { 'X-API-Key': key } }),
      // Reads stay open (SDC_READ_NEEDS_KEY is off); a key sent to them is verified all the same.
      ...both('GET', '/query?instrument=swe'),
      ...both('GET', '/query?instrument=swe', { headers: { 'X-API-Key': key } }),
      { method: 'OPTIONS', url: `/upload/${NEW}`, headers: { Origin: 'https://portal.example.org', 'Access-Control-Request-Method': 'GET' } },
    ]);
  });

  it('answers withdrawals and withdrawn files alike (docs/api.md "Withdrawn files")', async () => {
    const keys = server().ctx.catalog.keys();
    const { key: curator } = await keys.create('parity-curator', 'curator');
    const { key: uploader } = await keys.create('parity-uploader');
    const json = { 'Content-Type': 'application/json' };
    // Refusals change nothing, so each carrier meets the same state.
    await expectParity([
      { method: 'POST', url: `/withdraw/${STORED}`, headers: json, body: '{"reason":"x"}' },
      { method: 'POST', url: `/withdraw/${STORED}`, headers: { ...json, 'X-API-Key': uploader }, body: '{"reason":"x"}' },
      { method: 'POST', url: `/withdraw/${STORED}`, headers: { ...json, 'X-API-Key': curator }, body: '{}' },
      { method: 'POST', url: `/withdraw/${STORED}`, headers: { ...json, 'X-API-Key': curator }, body: `{"reason":"x","superseded_by":"${STORED_NAME.replace('v00-01', 'v00-07')}"}` },
      { method: 'POST', url: `/withdraw/${STORED_NAME.replace('v00-01', 'v00-09')}`, headers: { ...json, 'X-API-Key': curator }, body: '{"reason":"x"}' },
      { method: 'POST', url: '/withdraw', headers: { ...json, 'X-API-Key': curator }, body: '{"reason":"x"}' },
      { method: 'GET', url: `/withdraw/${STORED}` },
    ]);
    // Withdrawn once (through the server), then seen alike: 409 again, 410, the upload's 409, status=.
    const done = await server().ctx.catalog.withdraw(OTHER, { withdrawn_date: '2026-01-02T03:04:05.000Z', withdrawn_reason: 'parity', withdrawn_by: 'parity-curator', superseded_by: STORED });
    expect(done.outcome).toBe('withdrawn');
    await expectParity([
      { method: 'POST', url: `/withdraw/${OTHER}`, headers: { ...json, 'X-API-Key': curator }, body: '{"reason":"again"}' },
      ...both('GET', `/download/${OTHER}`),
      ...both('GET', `/download/${OTHER}?withdrawn=include`, { headers: { 'X-API-Key': uploader } }),
      ...both('GET', `/upload/${OTHER}`, { headers: { 'X-API-Key': uploader } }),
      ...both('GET', '/query?instrument=swe&status=withdrawn'),
      ...both('GET', '/query?instrument=swe&status=any'),
      ...both('GET', '/coverage?instrument=swe&status=withdrawn'),
    ]);
  });

  it('answers releases alike: refusals, the list, a release in every format, its files, a retraction\'s 409 (docs/api.md "Releases")', async () => {
    const keys = server().ctx.catalog.keys();
    const { key: curator } = await keys.create('release-curator', 'curator');
    const { key: uploader } = await keys.create('release-uploader');
    const json = { 'Content-Type': 'application/json' };
    const asCurator = { ...json, 'X-API-Key': curator };
    // Refusals change nothing, so each carrier meets the same state.
    await expectParity([
      { method: 'POST', url: '/releases', headers: json, body: `{"title":"t","files":["${STORED}"]}` },
      { method: 'POST', url: '/releases', headers: { ...json, 'X-API-Key': uploader }, body: `{"title":"t","files":["${STORED}"]}` },
      { method: 'POST', url: '/releases', headers: asCurator, body: '{"files":[]}' },
      { method: 'POST', url: '/releases', headers: asCurator, body: `{"title":"t","files":["${STORED.replace('v00-01', 'v00-08')}"]}` },
      { method: 'POST', url: '/releases', headers: asCurator, body: '{"title":"t","query":{"instrument":"idex"}}' },
      ...both('GET', '/releases/1'),
      { method: 'POST', url: '/releases/1/retract', headers: asCurator, body: '{"reason":"x"}' },
      // Methods a release URL does not serve: 405 with Allow.
      { method: 'DELETE', url: '/releases/1', headers: asCurator },
      ...both('GET', '/releases/1/retract'),
    ]);
    // Made once (through the server), then read alike.
    const made = await fetch(`${server().url}/releases`, { method: 'POST', headers: asCurator, body: `{"title":"Parity","description":"one file","files":["${STORED_NAME}"]}` });
    expect(made.status).toBe(201);
    const { release } = (await made.json()) as { release: number };
    await expectParity([
      ...both('GET', '/releases'),
      ...both('GET', `/releases/${release}`),
      ...both('GET', `/releases/${release}?format=csv`),
      ...both('GET', `/releases/${release}?format=metalink`),
      ...both('GET', `/releases/${release}?format=datacite`),
      ...both('GET', `/releases/${release}?format=xml`),
      ...both('GET', `/query?release=${release}`),
      { method: 'POST', url: `/releases/${release}/retract`, headers: asCurator, body: '{"reason":""}' },
    ]);
    expect((await fetch(`${server().url}/releases/${release}/retract`, { method: 'POST', headers: asCurator, body: '{"reason":"parity"}' })).status).toBe(200);
    await expectParity([{ method: 'POST', url: `/releases/${release}/retract`, headers: asCurator, body: '{"reason":"again"}' }, ...both('GET', `/releases/${release}`)]);
  });

  it('answers the sign-in routes alike (docs/trust.md "Signed-in callers")', async () => {
    await expectParity([
      ...both('GET', '/auth/config'),
      ...both('GET', '/auth/whoami'),
      { method: 'POST', url: '/auth/config' },
      { method: 'POST', url: '/auth/whoami' },
    ]);
  });

  it('says at once, on Lambda, that the live feed is not served there and what to poll instead', async () => {
    for (const event of [v1({ method: 'GET', url: '/events?instrument=swe' }), v2({ method: 'GET', url: '/events' })]) {
      const answer = await viaLambda(event);
      expect(answer.status).toBe(404);
      expect(answer.body.toString()).toBe(FEED_NOT_SERVED);
      expect(answer.body.toString()).toMatch(/poll GET \/changes\?after=/);
    }
    expect((await viaLambda(v2({ method: 'HEAD', url: '/events' }))).status).toBe(404);
    // The server's feed is there, and its description says so; the Lambda's description leaves it out.
    const head = await fetch(`${server().url}/events`, { method: 'HEAD' });
    expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    hit.add('GET /events').add('HEAD /events');
  });

  it('covers every route of the route table', () => {
    const exempt = new Set(['OPTIONS *']);
    const patterns = new Set(server().app.accessTable().map((e) => `${e.method} ${e.url}`));
    const matches = (pattern: string) => {
      const [method, url] = pattern.split(' ') as [string, string];
      return [...hit].some((h) => {
        const [m, path] = h.split(' ') as [string, string];
        if (m !== method && !(['DELETE', 'PATCH', 'POST', 'PUT'].includes(method) && ['DELETE', 'PATCH', 'POST', 'PUT'].includes(m))) return false;
        if (url.endsWith('*')) return path.startsWith(url.slice(0, -1));
        // A named parameter (`/releases/:n`) matches one segment.
        return new RegExp(`^${url.replace(/:[a-z]+/g, '[^/]+')}$`).test(path);
      });
    };
    const missed = [...patterns].filter((p) => !exempt.has(p) && !matches(p));
    expect(missed).toEqual([]);
  });
});

describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`Lambda carrier and sdc serve answer alike with SDC_READ_NEEDS_KEY=true (${PRODUCTION_BACKENDS_LABEL})`, () => {
  const { server, expectParity } = parityRig({ readNeedsKey: 'true' }, { SDC_READ_NEEDS_KEY: 'true' });

  it('asks for a key to query, download, see coverage and open the feed, alike; public routes stay open', async () => {
    const { key } = await server().ctx.catalog.keys().create('reader');
    const withKey = { headers: { 'X-API-Key': key } };
    await expectParity([
      ...both('GET', '/query?instrument=swe'),
      ...both('GET', '/query?instrument=swe', withKey),
      ...both('GET', '/query?instrument=swe', { headers: { Authorization: 'Bearer sdc_wrong' } }),
      ...both('GET', `/download/${STORED_NAME}`),
      ...both('GET', `/download/${STORED_NAME}`, withKey),
      ...both('GET', '/v0/query?instrument=swe'),
      ...both('GET', '/v0/query?instrument=swe', withKey),
      ...both('GET', '/coverage?instrument=swe'),
      ...both('GET', '/coverage?instrument=swe', withKey),
      ...both('GET', '/changes?limit=2'),
      ...both('GET', '/changes?limit=2', withKey),
      // Refused before the feed would open: the same 401 on both carriers.
      ...both('GET', '/events'),
      ...both('GET', '/metrics', { compare: 'status' }),
      ...both('GET', '/healthz'),
      ...both('GET', '/openapi.json'),
    ]);
  });
});

describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`Lambda carrier and sdc serve answer Bearer tokens alike (${PRODUCTION_BACKENDS_LABEL})`, () => {
  // A real provider (oidc-provider on loopback), named to both carriers; the mission keeps l1a for
  // the team, so STORED and OTHER are team-only and DAMAGED (l2) public.
  let provider: TestProvider;
  let dir: string;
  const settings: ServerSettings = {};
  const env: Record<string, string> = {};
  beforeAll(async () => {
    provider = await startTestProvider();
    dir = await mkdtemp(join(tmpdir(), 'sdc-parity-oidc-'));
    const missionConfig = join(dir, 'mission.json');
    await writeFile(missionConfig, JSON.stringify({ ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }] } }));
    Object.assign(env, provider.env, { SDC_MISSION_CONFIG: missionConfig });
    Object.assign(settings, { missionConfig, oidcIssuer: provider.issuer, oidcAudience: env.SDC_OIDC_AUDIENCE, oidcRoles: env.SDC_OIDC_ROLES, oidcClientId: env.SDC_OIDC_CLIENT_ID });
  });
  afterAll(async () => {
    await provider?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const { v1, v2, viaLambda, server, expectParity } = parityRig(settings, env);
  const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
  const now = () => Math.floor(Date.now() / 1000);
  const ursula = { sub: 'ursula', preferred_username: 'ursula', groups: ['instrument-teams'] };

  it('answers 503 with Retry-After alike while the provider cannot be reached for its keys, never an anonymous answer', async () => {
    // Real tokens first, then the provider stops before either carrier has fetched its keys.
    const rita = await deviceSignIn(provider, 'rita');
    await provider.stop();
    try {
      await expectParity([...both('GET', '/query?instrument=swe', bearer(rita.access_token)), ...both('GET', `/upload/${NEW}`, bearer(rita.access_token))]);
      const answer = await viaLambda(v2({ method: 'GET', url: '/query', ...bearer(rita.access_token) }));
      expect([answer.status, answer.headers['x-error-code'], answer.headers['retry-after']]).toEqual([503, 'SDC_OIDC_UNAVAILABLE', expect.stringMatching(/^\d+$/)]);
    } finally {
      await provider.start();
    }
    // Both carriers take tokens again once the provider is back (each asks again after its own short wait).
    const ready = async () => {
      const http = await fetch(`${server().url}/auth/whoami`, { headers: { Authorization: `Bearer ${rita.access_token}` } });
      const lambda = await viaLambda(v1({ method: 'GET', url: '/auth/whoami', ...bearer(rita.access_token) }));
      return [http.status, lambda.status];
    };
    await expect.poll(ready, { timeout: 20_000, interval: 1_000 }).toEqual([200, 200]);
  });

  it('takes the name and role of real tokens alike: team-only files for a reader, uploads for an uploader, 403 for a role that does not allow the call', async () => {
    const tokens = Object.fromEntries(await Promise.all(['rita', 'ursula', 'carol', 'nobody'].map(async (user) => [user, (await deviceSignIn(provider, user)).access_token] as const)));
    const json = { 'Content-Type': 'application/json' };
    await expectParity([
      // Anonymous: DAMAGED only; a reader or curator: the team's STORED and OTHER too; no role: as anonymous.
      ...both('GET', '/query?instrument=swe'),
      ...['rita', 'carol', 'nobody'].flatMap((user) => [
        ...both('GET', '/query?sort=file_path', bearer(tokens[user]!)),
        ...both('GET', '/auth/whoami', bearer(tokens[user]!)),
        ...both('GET', `/download/${STORED}`, bearer(tokens[user]!)),
        ...both('GET', '/coverage', bearer(tokens[user]!)),
      ]),
      // Upload addresses: an uploader gets one (the uploader name signed into it), a reader and no role 403.
      ...['ursula', 'rita', 'nobody'].flatMap((user) => both('GET', `/upload/${NEW}`, bearer(tokens[user]!))),
      // Withdrawals: an uploader is refused 403; a curator's bad body 400 (refusals change nothing).
      { method: 'POST', url: `/withdraw/${STORED}`, headers: { ...json, Authorization: `Bearer ${tokens.ursula!}` }, body: '{"reason":"x"}' },
      { method: 'POST', url: `/withdraw/${STORED}`, headers: { ...json, Authorization: `Bearer ${tokens.carol!}` }, body: '{}' },
      // X-API-Key wins over a token; a Bearer value that is not a JWT is tried as an API key.
      ...both('GET', `/upload/${NEW}`, { headers: { 'X-API-Key': 'sdc_wrong', Authorization: `Bearer ${tokens.ursula!}` } }),
      ...both('GET', `/upload/${NEW}`, bearer('not-a-jwt')),
    ]);
    // Alike, and right: the Lambda carrier shows the team's files to a reader only, and names the caller.
    const paths = async (headers: Record<string, string>) =>
      ((JSON.parse((await viaLambda(v2({ method: 'GET', url: '/query?sort=file_path', headers }))).body.toString()) as { file_path: string }[]).map((r) => r.file_path));
    expect(await paths({})).toEqual([DAMAGED]);
    expect(await paths({ Authorization: `Bearer ${tokens.nobody!}` })).toEqual([DAMAGED]);
    expect(await paths({ Authorization: `Bearer ${tokens.rita!}` })).toEqual([DAMAGED, STORED, OTHER]);
    const whoami = await viaLambda(v1({ method: 'GET', url: '/auth/whoami', ...bearer(tokens.rita!) }));
    expect(JSON.parse(whoami.body.toString())).toMatchObject({ name: 'oidc:rita', role: 'reader', via: 'token' });
    expect((await viaLambda(v1({ method: 'GET', url: `/upload/${NEW}`, ...bearer(tokens.ursula!) }))).status).toBe(200);
  });

  it('refuses hostile tokens alike, each with its code and the invalid_token challenge (docs/trust.md "Signed-in callers")', async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const good = await provider.sign(ursula);
    const refused = {
      SDC_TOKEN_ALG_NOT_ALLOWED: `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...ursula, iss: provider.issuer, aud: 'sdc-api', exp: now() + 300 })}.`,
      SDC_TOKEN_WRONG_ISSUER: await provider.sign({ ...ursula, iss: 'https://idp.example.org' }),
      SDC_TOKEN_WRONG_AUDIENCE: await provider.sign({ ...ursula, aud: 'another-service' }),
      SDC_TOKEN_EXPIRED: await provider.sign({ ...ursula, iat: now() - 600, exp: now() - 60 }),
      SDC_TOKEN_NOT_YET_VALID: await provider.sign({ ...ursula, nbf: now() + 120 }),
      SDC_TOKEN_UNKNOWN_KEY: await provider.sign(ursula, { key: await signingKey('intruder') }),
      SDC_TOKEN_BAD_SIGNATURE: good.slice(0, -12),
      SDC_TOKEN_MALFORMED: good.slice(0, good.indexOf('.') + 20),
      SDC_TOKEN_ROLES_CLAIM_INVALID: await provider.sign({ ...ursula, groups: 'sdc-curators' }),
    };
    const cases = Object.values(refused).flatMap((token) => [...both('GET', `/upload/${NEW}`, bearer(token)), ...both('GET', '/query', bearer(token))]);
    await expectParity(cases);
    // Each is the refusal it names on the Lambda carrier (the server's are compared equal above).
    for (const [code, token] of Object.entries(refused)) {
      const answer = await viaLambda(v1({ method: 'GET', url: '/query', ...bearer(token) }));
      expect([answer.status, answer.headers['x-error-code']], code).toEqual([401, code]);
      expect(answer.headers['www-authenticate'], code).toMatch(/^Bearer error="invalid_token", error_description="/);
    }
  });
});
