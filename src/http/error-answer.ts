import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BAD_REQUEST, ERROR_TEXT_TYPE, errorReply, INTERNAL, ServerError, unavailableError } from '../errors/index.js';

/**
 * The one renderer of errors (Fastify and, through inject, Lambda): status, the code in
 * X-Error-Code, the error's own headers, and its text as text/plain. The body is the
 * declared message alone, so the spec's texts (7.1-7.3) reach the client byte for byte.
 */
export function sendError(reply: FastifyReply, error: ServerError): FastifyReply {
  const answer = errorReply(error, { 'Content-Type': ERROR_TEXT_TYPE });
  return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
}

/**
 * Whatever was thrown, as the error that is answered: a declared one as it is; one of
 * Fastify's own refusals (4xx: a body it cannot parse, one over its limit) with its text
 * and its FST_ code; a dependency that is down, its 503; anything else is INTERNAL, its
 * details left to the log.
 */
export function answeredError(error: Error & { statusCode?: number; code?: unknown }): ServerError | undefined {
  if (error instanceof ServerError) return error.statusCode === 500 ? unavailableError(error) : error;
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return frameworkRefusal(error, status);
  // A dependency down or busy: 503 with Retry-After (errors/unavailable.ts), never 500.
  return unavailableError(error);
}

/** The error handler of the app: one per app, for every route and hook. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answered = answeredError(error as Error & { statusCode?: number });
  if (!answered) {
    request.log.error({ err: error }, 'request failed');
    return sendError(reply, INTERNAL.create(request.id));
  }
  // Said once a request, with the driver's error: the operator sees which dependency and why.
  if (answered.statusCode === 503 && answered.cause !== undefined) request.log.warn({ err: answered.cause, code: answered.code }, 'dependency unavailable');
  // A refusal before the body was read (e.g. 413): close, rather than read the rest.
  if (!request.raw.complete) reply.header('Connection', 'close');
  return sendError(reply, answered);
}

/** One of Fastify's refusals, kept as Fastify made it: its FST_ code, status and text. */
export function frameworkRefusal(error: Error & { code?: unknown }, status: number): ServerError {
  if (typeof error.code === 'string') return new ServerError(error.code, status, error.message);
  // An error with a status and no code (a plugin's own): its status and text, no code to show.
  return status === BAD_REQUEST.statusCode ? BAD_REQUEST.create(error.message) : new ServerError('', status, error.message);
}
