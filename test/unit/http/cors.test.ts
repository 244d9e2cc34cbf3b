import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyOriginOptions, registerCors } from '../../../src/http/cors.js';

/** An app with a few routes of each kind and the CORS policy `*`, by the package or by ours. */
async function appWith(policy: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const app = Fastify();
  // A hook before the policy that sets Vary, as a later feature might.
  app.addHook('onRequest', (request, reply, done) => {
    const vary = request.headers['x-test-vary'];
    if (typeof vary === 'string') reply.header('Vary', vary);
    done();
  });
  await policy(app);
  app.get('/query', async () => []);
  app.get('/download/*', async (_request, reply) => reply.code(302).header('Location', 'http://x/y').send(''));
  app.put('/store/*', async () => 'stored');
  app.get('/fails', async () => {
    throw new Error('boom');
  });
  await app.ready();
  return app;
}

const preflight = (headers: Record<string, string>, url = '/query'): InjectOptions => ({ method: 'OPTIONS', url, headers });
const REQUESTS: InjectOptions[] = [
  { method: 'GET', url: '/query' },
  { method: 'GET', url: '/query', headers: { origin: 'https://portal.example' } },
  { method: 'GET', url: '/download/a/b.cdf', headers: { origin: 'https://portal.example' } },
  { method: 'HEAD', url: '/query', headers: { origin: 'null' } },
  { method: 'PUT', url: '/store/a/b.cdf', payload: 'x', headers: { origin: 'https://portal.example' } },
  { method: 'GET', url: '/nowhere', headers: { origin: 'https://portal.example' } },
  { method: 'GET', url: '/fails' },
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'GET' }),
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-request-id, content-type' }, '/store/a/b.cdf'),
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'GET' }, '/nowhere'),
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'GET', 'x-test-vary': 'Accept' }),
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'GET', 'x-test-vary': '*' }),
  preflight({ origin: 'https://portal.example', 'access-control-request-method': 'GET', 'x-test-vary': 'accept, Access-Control-Request-Headers' }),
  preflight({ origin: 'https://portal.example' }),
  preflight({ 'access-control-request-method': 'GET' }),
  preflight({}),
];

describe('CORS policy * answered without @fastify/cors', () => {
  let theirs: FastifyInstance;
  let ours: FastifyInstance;
  beforeAll(async () => {
    theirs = await appWith(async (app) => {
      await app.register(cors, { ...anyOriginOptions, methods: [...anyOriginOptions.methods], exposedHeaders: [...anyOriginOptions.exposedHeaders] });
    });
    ours = await appWith((app) => registerCors(app, '*'));
  });
  afterAll(async () => {
    await theirs.close();
    await ours.close();
  });

  it('gives every request the same status, headers (in the same order) and body as the package', async () => {
    for (const request of REQUESTS) {
      const [a, b] = await Promise.all([theirs.inject(request), ours.inject(request)]);
      const what = `${request.method} ${request.url} ${JSON.stringify(request.headers ?? {})}`;
      const head = (res: typeof a) => Object.entries(res.headers).filter(([name]) => name !== 'date');
      expect(b.statusCode, what).toBe(a.statusCode);
      expect(head(b), what).toEqual(head(a));
      expect(b.body, what).toBe(a.body);
    }
  });

  it('answers preflights itself and exposes the request id (the checks above are not vacuous)', async () => {
    const res = await ours.inject(REQUESTS[8]!);
    expect(res.statusCode).toBe(204);
    expect(res.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, PUT',
      'access-control-allow-headers': 'x-request-id, content-type',
      'access-control-max-age': '600',
      vary: 'Access-Control-Request-Headers',
    });
    expect((await ours.inject(REQUESTS[1]!)).headers['access-control-expose-headers']).toMatch(/^x-request-id, X-Error-Code, Location/);
    expect((await ours.inject(REQUESTS[13]!)).statusCode).toBe(400);
  });
});
