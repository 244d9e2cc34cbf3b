import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';
import { checkDependencies, ingestBacklog } from './dependency-checks.js';

/** name and version of this package; src/http and dist/http both sit two levels below it. */
const PACKAGE = createRequire(import.meta.url)('../../package.json') as { name: string; version: string };

const status = (description: string, properties: Record<string, object>, optional: Record<string, object> = {}) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties: { ...properties, ...optional }, required: Object.keys(properties) } } },
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

/** Only for a store on this machine's disk (the local store): docs/deploy.md "Free space". */
const space = {
  space: {
    type: 'object',
    description: 'The local store\'s file system, in bytes: free, size, and the watermark (SDC_MIN_FREE) under which new uploads are refused (507); low is true while they are.',
    properties: { free_bytes: { type: 'integer' }, size_bytes: { type: 'integer' }, min_free_bytes: { type: 'integer' }, low: { type: 'boolean' } },
  },
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
            'A local store under its free-space watermark answers 200 "degraded" with `space.low` true. ' +
            'A shared object store (S3) that does not answer fails every instance alike, so taking this one out would not help: ' +
            'it answers 200 with status "degraded" (queries still work). docs/self-hosted.md says where to point health checks.',
          response: {
            200: status('Ready to serve ("degraded": the store does not answer, or the local store is under its free-space watermark; queries and downloads still work).', readiness, space),
            503: status('Not ready: the catalog did not answer (details in the log).', readiness, space),
          },
        },
      },
      async (request, reply) => {
        const results = await checkDependencies(ctx, (check, err) => request.log.warn({ err, check }, 'readiness check failed'));
        // The local store is this instance's own: its failure makes this instance worse than a peer.
        const storeDown = results.store !== 'ok';
        // Short of space, the instance still serves queries and downloads; only new uploads are refused.
        const room = ctx.store.space?.reading();
        const state = results.catalog !== 'ok' || (storeDown && !ctx.store.shared) ? 'not ready' : storeDown || room?.low ? 'degraded' : 'ready';
        const body = { status: state, checks: results, backlog: ingestBacklog(ctx) };
        const answer = room ? { ...body, space: { free_bytes: room.free, size_bytes: room.size, min_free_bytes: room.minFree, low: room.low } } : body;
        return reply.code(state === 'not ready' ? 503 : 200).send(answer);
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
