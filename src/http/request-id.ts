import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What an upstream id may look like to be kept: short, and safe in a header and a log line. */
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's id: the one a load balancer or client sent in X-Request-Id when it is
 * sane (so a request can be followed across hops), else a fresh UUID. Fastify puts it
 * on every log line of the request (`reqId`).
 */
export function requestId(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && ACCEPTABLE.test(sent) ? sent : randomUUID();
}

/** Every response says its request id, whatever answers it (route, 404, error, preflight). */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
