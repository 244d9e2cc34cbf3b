import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { redactUrl } from '../redact-url.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * Requests Fastify refuses before any route or hook runs (a path that is not valid
 * percent-encoding; a `:param` over the length limit): a plain-text message that says
 * what was wrong, with the request id, as every other answer has.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = redactUrl(request.url).split('?')[0]!;
  const [status, message] =
    error.code === 'FST_ERR_BAD_URL'
      ? [400, `The path ${path} is not valid percent-encoding. Encode each reserved or non-ASCII byte as %XX (UTF-8).`]
      : [error.statusCode ?? 400, error.message];
  void reply.code(status).header(REQUEST_ID_HEADER, request.id).type('text/plain; charset=utf-8').send(message);
}
