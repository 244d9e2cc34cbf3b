import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';

/**
 * What GET /events answers on Lambda. Lambda answers each request in one piece and a
 * live feed never ends, so the feed cannot run there: rather than hold the connection
 * until API Gateway cuts it (a 503/504 after 30 s), the route says so at once, with the
 * alternative. 404: this deployment has no such resource; it is the client's request
 * to change (a 5xx would make clients retry and set off the operators' 5xx alarm).
 */
export const FEED_NOT_SERVED =
  'The live feed (GET /events) is not served by this deployment: it runs on AWS Lambda, which answers each request in one piece, ' +
  'and a feed never ends. To follow new files, poll GET /query?ingestion_start_date=<time of your last poll> ' +
  '(with limit=<n>, following the Link header rel="next" page by page), or use an `sdc serve` deployment for the feed.';

export function feedNotServedRoute(_ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    // Left out of the OpenAPI document and the 404's list of endpoints: it is not an operation here.
    app.get('/events', { schema: { hide: true }, config: { access: 'read' } }, async (_request, reply) =>
      reply.code(404).type('text/plain; charset=utf-8').send(FEED_NOT_SERVED),
    );
  };
}
