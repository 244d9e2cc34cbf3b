import type { FastifyRequest } from 'fastify';

/**
 * The API key a request carries: `X-API-Key: <key>` (the mission's own header) or
 * `Authorization: Bearer <key>`. X-API-Key wins when both are sent.
 */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const direct = Array.isArray(header) ? header[0] : header;
  if (direct !== undefined && direct.trim() !== '') return direct.trim();
  return bearerToken(request.headers.authorization);
}

/** The token of `Authorization: Bearer <token>` (scheme in any case), or undefined when there is none. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}
