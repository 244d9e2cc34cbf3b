import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';
import { ERROR_CODE_HEADER } from '../errors/index.js';
import { DOWNLOAD_EXPIRES_HEADER } from '../service/download.js';

/** `*`, or the exact origins allowed (SDC_CORS_ORIGIN). */
export type CorsOrigin = '*' | readonly string[];

/**
 * CORS on every route, preflight `OPTIONS` answered. The default `*` is the spec's
 * header on query answers (4.3); an operator may narrow it to a list of origins, and
 * then every route, query included, follows the list (envelope-reply.ts leaves
 * Access-Control-* to this policy). PUT is allowed for the local store's signed
 * upload addresses, which a browser on another origin may use.
 *
 * The CORS hook runs first (onRequest) and puts its headers on every answer, refusals
 * included, but lets a preflight go on (`preflightContinue`): the rate limit's hook, after
 * it, counts preflights like any request (docs/trust.md, "Second attacker round"), and a
 * preflight past the budget is a 429 a browser can read. Within the budget the preflight
 * is answered `204` with no body (docs/api.md), just before the plugin's `OPTIONS *` route.
 */
export async function registerCors(app: FastifyInstance, origin: CorsOrigin): Promise<void> {
  await app.register(cors, {
    origin: origin === '*' ? '*' : [...origin],
    methods: ['GET', 'HEAD', 'PUT'],
    exposedHeaders: [REQUEST_ID_HEADER, ERROR_CODE_HEADER, 'Location', 'Content-Disposition', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'ETag', 'Repr-Digest', DOWNLOAD_EXPIRES_HEADER],
    maxAge: 600,
    preflightContinue: true,
  });
  // App-wide (registerCors is called on the root instance): only OPTIONS * meets a preflight here.
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // Safari waits for a body on a 204 without Content-Length (as the CORS plugin's own answer).
    if ((request as FastifyRequest & { corsPreflightEnabled?: boolean }).corsPreflightEnabled) reply.code(204).header('Content-Length', '0');
    done();
  });
}
