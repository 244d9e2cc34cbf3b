import type { FastifyRequest } from 'fastify';
import type { Caller } from '../service/index.js';

/**
 * Who calls, as the service's visibility rule needs it (src/service/visibility.ts): any valid
 * key, whatever its role, sees every file (docs/api.md "Who sees what"). The key was checked
 * by api-key-auth.ts on every route of class `read`; a key that is wrong or revoked counts as none.
 */
export function callerOf(request: FastifyRequest): Caller {
  return { keyed: request.keyVerdict?.kind === 'valid' };
}
