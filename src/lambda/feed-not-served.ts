import type { FastifyInstance } from 'fastify';
import { FEED_NOT_SERVED as FEED_NOT_SERVED_ERROR } from '../errors/index.js';
import { sendError } from '../http/error-answer.js';
import type { ServiceContext } from '../service/index.js';

/**
 * What GET /events answers on Lambda. Lambda answers each request in one piece and a
 * live feed never ends, so the feed cannot run there: rather than hold the connection
 * until API Gateway cuts it (a 503/504 after 30 s), the route says so at once, with the
 * alternative. 404: this deployment has no such resource; it is the client's request
 * to change (a 5xx would make clients retry and set off the operators' 5xx alarm).
 */
export const FEED_NOT_SERVED = FEED_NOT_SERVED_ERROR.message();

export function feedNotServedRoute(_ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    // Left out of the OpenAPI document and the 404's list of endpoints: it is not an operation here.
    app.get('/events', { schema: { hide: true }, config: { access: 'read' } }, async (_request, reply) =>
      sendError(reply, FEED_NOT_SERVED_ERROR.create()),
    );
  };
}
