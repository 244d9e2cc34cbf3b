import type { FastifyRequest } from 'fastify';
import type { Caller } from '../service/index.js';

/**
 * Who calls, as the service's visibility rule needs it (src/service/visibility.ts): any valid
 * key, whatever its role, and a signed-in caller holding a role (reader, uploader or curator)
 * see every file (docs/api.md "Who sees what"). The credential was checked by api-key-auth.ts on
 * every route of class `read`; a key that is wrong or revoked, or a token with no role, counts as none.
 */
export function callerOf(request: FastifyRequest): Caller {
  const verdict = request.keyVerdict;
  return { keyed: verdict?.kind === 'valid' || (verdict?.kind === 'token' && verdict.role !== undefined) };
}
