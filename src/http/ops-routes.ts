import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';
import { checkDependencies, ingestBacklog } from './dependency-checks.js';

/** name and version of this package; src/http and dist/http both sit two levels below it. */
const PACKAGE = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

const status = (description: string, properties: Record<string, object>) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties, required: Object.keys(properties) } } },
});

const checks = {
  type: 'object',
  properties: { catalog: { type: 'string', enum: ['ok', 'unreachable'] }, store: { type: 'string', enum: ['ok', 'unreachable'] } },
};

const backlog = {
  type: 'object',
  description: 'Uploads the store acknowledged that are not indexed yet, as the last sweep saw them.',
  properties: { uploads: { type: 'integer' }, oldest_seconds: { type: 'integer' } },
};

const readiness = {
  status: { type: 'string', enum: ['ready', 'degraded', 'not ready'] },
  checks,
  backlog,
};

/** For load balancers and operators: liveness, readiness, version. */
export function opsRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get(
      '/healthz',
      { config: { access: 'public' }, schema: { operationId: 'healthz', tags: ['operations'], summary: 'Liveness: the process is up (asks no dependency; point restarts here, not at /readyz)', response: { 200: status('Up.', { status: { type: 'string', enum: ['ok'] } }) } } },
      async () => ({ status: 'ok' }),
    );

    app.get(
      '/readyz',
      {
        config: { access: 'public' },
        schema: {
          operationId: 'readyz',
          tags: ['operations'],
          summary: 'Readiness: this instance can reach the catalog (the store is reported, not required)',
          description:
            'Fails (503) only for what makes this instance worse than its peers: it cannot reach the catalog. ' +
            'A shared object store (S3) that does not answer fails every instance alike, so taking this one out would not help: ' +
            'it answers 200 with status "degraded" (queries still work). docs/self-hosted.md says where to point health checks.',
          response: {
            200: status('Ready to serve ("degraded": the store does not answer; queries still do).', readiness),
            503: status('Not ready: the catalog did not answer (details in the log).', readiness),
          },
        },
      },
      async (request, reply) => {
        const results = await checkDependencies(ctx, (check, err) => request.log.warn({ err, check }, 'readiness check failed'));
        // The local store is this instance's own: its failure makes this instance worse than a peer.
        const storeDown = results.store !== 'ok';
        const state = results.catalog !== 'ok' || (storeDown && !ctx.store.shared) ? 'not ready' : storeDown ? 'degraded' : 'ready';
        return reply.code(state === 'not ready' ? 503 : 200).send({ status: state, checks: results, backlog: ingestBacklog(ctx) });
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
