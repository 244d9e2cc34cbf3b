import { callerOf } from './caller.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Envelope, QueryRequestInfo, ServiceContext } from '../service/index.js';
import { sendEnvelope } from './envelope-reply.js';
import { linkToRequest } from './public-links.js';

/** The wildcard tail of `/upload/*` or `/download/*`; '' for the bare route. */
export function pathParam(request: FastifyRequest): string {
  return (request.params as Record<string, string | undefined>)['*'] ?? '';
}

/** `?sha256=` of an upload request, when sent (its spelling is checked by the operation). */
export function sha256Param(request: FastifyRequest): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.sha256;
  return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
}

/** The query string as (name, value) pairs in the order sent, repeats kept. */
export function queryPairs(url: string): [string, string][] {
  const q = url.indexOf('?');
  return q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))];
}

/** What a query needs of the request beyond its parameters: Accept, and its address for the next page's Link. */
export function queryInfo(request: FastifyRequest): QueryRequestInfo {
  return {
    accept: request.headers.accept,
    caller: callerOf(request),
    // Built only when read: only an answer with a next page needs it.
    get url() {
      return linkToRequest(request);
    },
  };
}

export type Operation = (ctx: ServiceContext, request: FastifyRequest) => Envelope | Promise<Envelope>;

/**
 * A route handler: request -> service operation -> envelope -> response. The
 * operation logs through the request's logger, so its lines carry the request id.
 * Routes set `attachValidation`: the operation answers a request its schema refused,
 * with the spec's message; if it accepts one, the schema is stricter than the rule
 * it describes, which the log says.
 */
export function envelopeRoute(ctx: ServiceContext, operation: Operation) {
  const answer = (request: FastifyRequest, reply: FastifyReply, envelope: Envelope): FastifyReply | Promise<FastifyReply> => {
    if (request.validationError && envelope.statusCode < 400) {
      request.log.warn({ err: request.validationError }, 'route schema refused a request the service accepts');
    }
    return sendEnvelope(reply, envelope);
  };
  // Not an async function: no promise of its own on top of the operation's. What it resolves
  // with is the reply (a thenable that Fastify waits on until the answer, streamed or not, ends).
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> => {
    // The service context with the request's logger: an object that inherits the rest (no copy per request).
    const requestCtx = Object.create(ctx) as { -readonly [K in keyof ServiceContext]: ServiceContext[K] };
    requestCtx.log = request.log;
    const envelope = operation(requestCtx, request);
    return envelope instanceof Promise ? (envelope as Promise<Envelope>).then((e) => answer(request, reply, e)) : answer(request, reply, envelope);
  };
}
