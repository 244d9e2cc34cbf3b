import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';

/** name and version of this package; src/http and dist/http both sit two levels below it. */
const PACKAGE = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

/** A check that has not answered by then counts as failed: a load balancer must not wait on it. */
const CHECK_TIMEOUT_MS = 2000;

const status = (description: string, properties: Record<string, object>) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties, required: Object.keys(properties) } } },
});

const checks = {
  type: 'object',
  properties: { catalog: { type: 'string', enum: ['ok', 'unreachable'] }, store: { type: 'string', enum: ['ok', 'unreachable'] } },
};

/** For load balancers and operators: liveness, readiness, version. */
export function opsRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get(
      '/healthz',
      { config: { access: 'public' }, schema: { operationId: 'healthz', tags: ['operations'], summary: 'Liveness: the process is up', response: { 200: status('Up.', { status: { type: 'string', enum: ['ok'] } }) } } },
      async () => ({ status: 'ok' }),
    );

    app.get(
      '/readyz',
      {
        config: { access: 'public' },
        schema: {
          operationId: 'readyz',
          tags: ['operations'],
          summary: 'Readiness: the catalog and the object store answer',
          response: {
            200: status('Ready to serve.', { status: { type: 'string', enum: ['ready'] }, checks }),
            503: status('Not ready: a backend did not answer (details in the log).', { status: { type: 'string', enum: ['not ready'] }, checks }),
          },
        },
      },
      async (request, reply) => {
        const probe = async (name: string, ping: () => Promise<void>): Promise<'ok' | 'unreachable'> => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
          });
          try {
            await Promise.race([ping(), timeout]);
            return 'ok';
          } catch (err) {
            request.log.warn({ err, check: name }, 'readiness check failed');
            return 'unreachable';
          } finally {
            clearTimeout(timer);
          }
        };
        const [catalog, store] = await Promise.all([probe('catalog', () => ctx.catalog.ping()), probe('store', () => ctx.store.ping())]);
        const ready = catalog === 'ok' && store === 'ok';
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: { catalog, store } });
      },
    );

    app.get(
      '/version',
      {
        config: { access: 'public' },
        schema: {
          operationId: 'version',
          tags: ['operations'],
          summary: 'Name and version of the running service',
          response: { 200: status('The running build.', { name: { type: 'string', examples: [PACKAGE.name] }, version: { type: 'string', examples: [PACKAGE.version] } }) },
        },
      },
      async () => ({ name: PACKAGE.name, version: PACKAGE.version }),
    );
  };
}
