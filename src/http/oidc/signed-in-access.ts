import type { FastifyRequest } from 'fastify';
import type { KeyCheck, KeyRole } from '../../catalog/index.js';
import { TOKEN_ROLE_REFUSED, type ServerError } from '../../errors/index.js';
import { bearerToken } from '../presented-key.js';
import type { AccessClass } from '../route-access.js';
import { looksLikeJwt, type TokenVerdict } from './token-verifier.js';

/** What the key check found: an API key's verdict, or a Bearer token's. */
export type CallerVerdict = KeyCheck | TokenVerdict;

/** The JWT a request carries as `Authorization: Bearer`, when it sends no X-API-Key (which wins, as for keys). */
export function presentedToken(request: FastifyRequest): string | undefined {
  if (request.headers['x-api-key'] !== undefined) return undefined;
  const token = bearerToken(request.headers.authorization);
  return token !== undefined && looksLikeJwt(token) ? token : undefined;
}

/** Roles that may call each class that looks at roles (docs/trust.md, "Signed-in callers"). */
const MAY: Partial<Record<AccessClass, readonly KeyRole[]>> = {
  read: ['reader', 'uploader', 'curator'],
  upload: ['uploader', 'curator'],
  curator: ['curator'],
};
const NEEDED: Partial<Record<AccessClass, string>> = { read: 'a reader, uploader or curator role', upload: 'an uploader or curator role', curator: 'the curator role' };

/**
 * The 403 for a signed-in caller whose role does not allow the route's class (a token with no
 * mapped role is signed in, not an invalid credential), or undefined when it may call it.
 */
export function signedInRefusal(verdict: TokenVerdict & { kind: 'token' }, access: AccessClass): ServerError | undefined {
  const may = MAY[access];
  if (may === undefined || (verdict.role !== undefined && may.includes(verdict.role))) return undefined;
  return TOKEN_ROLE_REFUSED.create(verdict.name, verdict.role, NEEDED[access]!);
}
