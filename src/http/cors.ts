import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';
import { ERROR_CODE_HEADER } from '../errors/index.js';

/** `*`, or the exact origins allowed (SDC_CORS_ORIGIN). */
export type CorsOrigin = '*' | readonly string[];

/**
 * CORS on every route, preflight `OPTIONS` answered. The default `*` is the spec's
 * header on query answers (4.3); an operator may narrow it to a list of origins, and
 * then every route, query included, follows the list (envelope-reply.ts leaves
 * Access-Control-* to this policy). PUT is allowed for the local store's signed
 * upload addresses, which a browser on another origin may use.
 */
export async function registerCors(app: FastifyInstance, origin: CorsOrigin): Promise<void> {
  await app.register(cors, {
    origin: origin === '*' ? '*' : [...origin],
    methods: ['GET', 'HEAD', 'PUT'],
    exposedHeaders: [REQUEST_ID_HEADER, ERROR_CODE_HEADER, 'Location', 'Content-Disposition', 'Content-Length', 'Content-Range', 'Accept-Ranges', 'ETag'],
    maxAge: 600,
  });
}
