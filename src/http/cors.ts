import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';
import { ERROR_CODE_HEADER } from '../errors/index.js';

/** `*`, or the exact origins allowed (SDC_CORS_ORIGIN). */
export type CorsOrigin = '*' | readonly string[];

const METHODS = ['GET', 'HEAD', 'PUT'];
const EXPOSED = [REQUEST_ID_HEADER, ERROR_CODE_HEADER, 'Location', 'Content-Disposition', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'ETag'];
const MAX_AGE = 600;

/**
 * CORS on every route, preflight `OPTIONS` answered. The default `*` is the spec's
 * header on query answers (4.3); an operator may narrow it to a list of origins, and
 * then every route, query included, follows the list (envelope-reply.ts leaves
 * Access-Control-* to this policy). PUT is allowed for the local store's signed
 * upload addresses, which a browser on another origin may use.
 *
 * A list of origins is @fastify/cors's job. The default `*`, on every request of a
 * server that keeps it, is answered by anyOrigin below with the same headers and the
 * same preflight answers (test/unit/http/cors.test.ts compares the two), without the
 * package's per-request work (route options read twice, its options copied, the exposed
 * headers joined).
 */
export async function registerCors(app: FastifyInstance, origin: CorsOrigin): Promise<void> {
  if (origin !== '*') {
    await app.register(cors, { origin: [...origin], methods: METHODS, exposedHeaders: EXPOSED, maxAge: MAX_AGE });
    return;
  }
  app.addHook('onRequest', anyOrigin);
  // The route that lets preflights reach the hook, which answers them all.
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
}

/** The policy's options as @fastify/cors is given them, for the comparison test. */
export const anyOriginOptions = { origin: '*', methods: METHODS, exposedHeaders: EXPOSED, maxAge: MAX_AGE } as const;

const EXPOSED_VALUE = EXPOSED.join(', ');
const METHODS_VALUE = METHODS.join(', ');
const MAX_AGE_VALUE = String(MAX_AGE);

/**
 * @fastify/cors with origin `*` (strict preflight, 204 answers): every answer allows any
 * origin and exposes our headers; a preflight without Origin or
 * Access-Control-Request-Method is refused (400), any other is answered here (204).
 */
function anyOrigin(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('Access-Control-Allow-Origin', '*');
  reply.header('Access-Control-Expose-Headers', EXPOSED_VALUE);
  if (request.raw.method !== 'OPTIONS') return done();
  if (!request.headers.origin || !request.headers['access-control-request-method']) {
    reply.status(400).type('text/plain').send('Invalid Preflight Request');
    return;
  }
  reply.header('Access-Control-Allow-Methods', METHODS_VALUE);
  varyOnRequestHeaders(reply);
  const asked = request.headers['access-control-request-headers'];
  if (asked !== undefined) reply.header('Access-Control-Allow-Headers', asked);
  reply.header('Access-Control-Max-Age', MAX_AGE_VALUE);
  reply.code(204).header('Content-Length', '0').send();
}

/** Adds Access-Control-Request-Headers to Vary (the preflight's answer depends on it). */
function varyOnRequestHeaders(reply: FastifyReply): void {
  const field = 'Access-Control-Request-Headers';
  const vary = reply.getHeader('Vary');
  if (vary === undefined || vary === '') return void reply.header('Vary', field);
  const value = Array.isArray(vary) ? vary.join(', ') : String(vary);
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  if (names.includes('*')) reply.header('Vary', '*');
  else if (!names.includes(field.toLowerCase())) reply.header('Vary', `${value}, ${field}`);
}
