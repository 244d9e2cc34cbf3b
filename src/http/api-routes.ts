import type { FastifyInstance, FastifyRequest } from 'fastify';
import { download, query, upload, type ServiceContext } from '../service/index.js';
import { sendEnvelope } from './envelope-reply.js';

/** The wildcard tail of `/upload/*` or `/download/*`; '' for the bare route. */
function pathParam(request: FastifyRequest): string {
  return (request.params as Record<string, string | undefined>)['*'] ?? '';
}

/** The query string as (name, value) pairs in the order sent, repeats kept. */
export function queryPairs(url: string): [string, string][] {
  const q = url.indexOf('?');
  return q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))];
}

/** The three endpoints of interface spec 4, current form. */
export function apiRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    for (const url of ['/upload', '/upload/*']) {
      app.get(url, async (request, reply) => sendEnvelope(reply, await upload(ctx, pathParam(request))));
    }
    for (const url of ['/download', '/download/*']) {
      app.get(url, async (request, reply) => sendEnvelope(reply, await download(ctx, pathParam(request))));
    }
    app.get('/query', async (request, reply) =>
      sendEnvelope(
        reply,
        await query(ctx, queryPairs(request.url), {
          accept: request.headers.accept,
          url: `${request.protocol}://${request.host}${request.url}`,
        }),
      ),
    );
  };
}
