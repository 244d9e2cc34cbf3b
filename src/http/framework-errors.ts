import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BAD_URL } from '../errors/index.js';
import { redactUrl } from '../redact-url.js';
import { frameworkRefusal, sendError } from './error-answer.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * Requests Fastify refuses before any route or hook runs (a path that is not valid
 * percent-encoding; a `:param` over the length limit): a plain-text message that says
 * what was wrong, with the request id, as every other answer has.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = redactUrl(request.url).split('?')[0]!;
  const refusal =
    error.code === 'FST_ERR_BAD_URL' ? BAD_URL.create(path) : frameworkRefusal(error, error.statusCode ?? 400);
  void sendError(reply.header(REQUEST_ID_HEADER, request.id), refusal);
}
