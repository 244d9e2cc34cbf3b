import type { FastifyReply, FastifyRequest } from 'fastify';
import { REPEATED_PARAMETER } from '../errors/index.js';
import { sendError } from './error-answer.js';
import { queryPairs } from './envelope-route.js';

/**
 * Routes whose operation reads the whole query string as (name, value) pairs and refuses a
 * repeated name itself, in its own answer's form (the query's JSON text after its unknown-name
 * check, docs/api.md "The three endpoints"; the change log's and the feed's).
 */
const ANSWERED_BY_OPERATION = new Set(['/query', '/v0/query', '/coverage', '/events', '/changes']);

/**
 * The one place a query parameter given twice is refused, for every other route (docs/api.md,
 * "HTTP conventions"): `?sha256=A&sha256=B` or `withdrawn=include&withdrawn=include` would
 * otherwise leave each route to pick one (or sign the first). 400 SDC_REPEATED_PARAMETER,
 * before the route reads anything.
 */
export async function refuseRepeatedParameters(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!request.url.includes('?') || ANSWERED_BY_OPERATION.has(request.routeOptions.url ?? '')) return;
  const seen = new Set<string>();
  for (const [name] of queryPairs(request.url)) {
    if (seen.has(name)) {
      if (!request.raw.complete) reply.header('Connection', 'close');
      await sendError(reply, REPEATED_PARAMETER.create(name));
      return;
    }
    seen.add(name);
  }
}
