import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { KeyStore } from '../catalog/index.js';
import { presentedKey } from './presented-key.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Name of the API key the request was authenticated with, if any. */
    apiKeyName?: string;
  }
}

export interface ApiKeyAuthOptions {
  readonly keys: KeyStore;
  /** Require keys for uploads even before any key exists (SDC_REQUIRE_KEYS). */
  readonly requireKeys: boolean;
  /** Require keys for query and download too (SDC_READ_NEEDS_KEY). */
  readonly readNeedsKey: boolean;
  /** The mission's name: its client reads the key from `<MISSION>_API_KEY`. */
  readonly missionName: string;
}

const UPLOAD = /^\/(?:v0\/)?upload(?:[/?]|$)/;
const READ = /^\/(?:v0\/)?(?:query|download|events)(?:[/?]|$)/;

export const messages = {
  missing: (what: string, missionName: string) =>
    `An API key is required to ${what}. Send it as the header X-API-Key: <key> (or Authorization: Bearer <key>; ` +
    `the sdc client takes it from ${missionName.toUpperCase()}_API_KEY or --api-key); the archive's operators issue keys with "sdc keys create".`,
  invalid: () => 'The API key is not valid: no key of this archive matches it. Check that it was copied whole, or ask for a new one.',
  revoked: (name: string, when: string) => `The API key "${name}" was revoked on ${when}. Ask the archive's operators for a new one.`,
} as const;

/**
 * Who may call what. The rule: uploads need a key as soon as any key has ever been
 * created (or always, with SDC_REQUIRE_KEYS); query and download need one only with
 * SDC_READ_NEEDS_KEY. The store's own signed addresses carry their authority in the
 * signature, so they are not checked here. 401 = no key sent, 403 = a wrong or revoked one.
 */
async function apiKeyAuth(app: FastifyInstance, options: ApiKeyAuthOptions): Promise<void> {
  // Keys are revoked, never deleted: once one exists, keys are required for good.
  let keysExist = options.requireKeys;
  const keysRequired = async () => (keysExist ||= await options.keys.anyExist());

  const refuse = (reply: FastifyReply, status: 401 | 403, message: string) => {
    if (status === 401) reply.header('WWW-Authenticate', 'Bearer');
    return reply.code(status).type('text/plain; charset=utf-8').send(message);
  };

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // A browser's CORS preflight never carries the key; the request that follows does.
    if (request.method === 'OPTIONS') return;
    const what = UPLOAD.test(request.url) ? 'upload' : options.readNeedsKey && READ.test(request.url) ? 'query or download' : undefined;
    if (what === undefined || !(await keysRequired())) return;
    const key = presentedKey(request);
    if (key === undefined) return refuse(reply, 401, messages.missing(what, options.missionName));
    const verdict = await options.keys.check(key);
    if (verdict.kind === 'invalid') return refuse(reply, 403, messages.invalid());
    if (verdict.kind === 'revoked') return refuse(reply, 403, messages.revoked(verdict.name, verdict.revokedAt));
    request.apiKeyName = verdict.name;
    // Every later log line of this request says whose key it was.
    request.log = reply.log = request.log.child({ api_key: verdict.name });
  });
}

export default fp(apiKeyAuth, { name: 'sdc-api-key-auth' });
