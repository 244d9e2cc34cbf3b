import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { KeyCheck, KeyStore } from '../catalog/index.js';
import { presentedKey } from './presented-key.js';
import type { AccessClass } from './route-access.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Name of the API key the request was authenticated with, if any. */
    apiKeyName?: string;
    /** The verdict on the key the request presented, when its route's class looks at keys. */
    keyVerdict?: KeyCheck;
  }
}

export interface ApiKeyAuthOptions {
  readonly keys: KeyStore;
  /** Require keys for uploads even before any key exists (SDC_REQUIRE_KEYS). */
  readonly requireKeys: boolean;
  /** Require keys for the `read` class too (SDC_READ_NEEDS_KEY). */
  readonly readNeedsKey: boolean;
  /** The mission's name: its client reads the key from `<MISSION>_API_KEY`. */
  readonly missionName: string;
}

export const messages = {
  missing: (what: string, missionName: string) =>
    `An API key is required to ${what}. Send it as the header X-API-Key: <key> (or Authorization: Bearer <key>; ` +
    `the sdc client takes it from ${missionName.toUpperCase()}_API_KEY or --api-key); the archive's operators issue keys with "sdc keys create".`,
  invalid: () => 'The API key is not valid: no key of this archive matches it. Check that it was copied whole, or ask for a new one.',
  revoked: (name: string, when: string) => `The API key "${name}" was revoked on ${when}. Ask the archive's operators for a new one.`,
} as const;

/** What each class that can need a key calls its calls, for the 401 message. */
const ACTION: Partial<Record<AccessClass, string>> = { upload: 'upload', read: 'query or download' };

/** The class of the route the request matched; unmatched requests (404) are public. */
function accessOf(request: FastifyRequest): AccessClass {
  return request.routeOptions.config.access ?? 'public';
}

/**
 * Who may call what, decided on the matched route's access class (route-access.ts):
 * `upload` needs a key as soon as any key has ever been created (or always, with
 * SDC_REQUIRE_KEYS); `read` needs one only with SDC_READ_NEEDS_KEY; the other classes
 * never look at API keys (public needs none; signed and operator routes carry their own
 * proof). 401 = no key sent, 403 = a wrong or revoked one.
 *
 * Two steps, so that the rate limit (rate-limit.ts) sits between them: `onRequest`
 * verifies a presented key (the limit then counts per verified key, else per address,
 * so invented keys share their sender's budget), and `preParsing` refuses.
 */
async function apiKeyAuth(app: FastifyInstance, options: ApiKeyAuthOptions): Promise<void> {
  // Keys are revoked, never deleted: once one exists, keys are required for good (so only
  // "required" is remembered; until then each request that needs a key asks the catalog).
  let keysExist = options.requireKeys;
  const needsKey = (access: AccessClass) => access === 'upload' || (access === 'read' && options.readNeedsKey);
  // A key sent to a read route is verified even where reads are open: its holder gets the key's rate budget.
  const takesKey = (access: AccessClass) => access === 'upload' || access === 'read';

  const refuse = (reply: FastifyReply, status: 401 | 403, message: string) => {
    if (status === 401) reply.header('WWW-Authenticate', 'Bearer');
    reply.code(status).type('text/plain; charset=utf-8').send(message);
  };

  // Callback-style hooks: a route that takes no key, or a request that sends none, passes
  // straight on, with no promise made for it.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    // A browser's CORS preflight never carries the key; the request that follows does.
    if (request.method === 'OPTIONS' || !takesKey(accessOf(request))) return done();
    const key = presentedKey(request);
    if (key === undefined) return done();
    options.keys.check(key).then((verdict) => {
      request.keyVerdict = verdict;
      if (verdict.kind === 'valid') {
        request.apiKeyName = verdict.name;
        // Every later log line of this request says whose key it was (pino's loggers bind in place).
        const log = request.log as FastifyBaseLogger & { setBindings?(bindings: object): void };
        if (log.setBindings) log.setBindings({ api_key: verdict.name });
        else request.log = reply.log = log.child({ api_key: verdict.name });
      }
      done();
    }, done);
  });

  const verdictOn = (request: FastifyRequest, reply: FastifyReply, access: AccessClass): boolean => {
    const verdict = request.keyVerdict;
    if (verdict === undefined) refuse(reply, 401, messages.missing(ACTION[access]!, options.missionName));
    else if (verdict.kind === 'invalid') refuse(reply, 403, messages.invalid());
    else if (verdict.kind === 'revoked') refuse(reply, 403, messages.revoked(verdict.name, verdict.revokedAt));
    else return true;
    return false;
  };

  app.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    const access = accessOf(request);
    if (request.method === 'OPTIONS' || !needsKey(access)) return done(null, payload);
    if (keysExist) {
      if (verdictOn(request, reply, access)) done(null, payload);
      return;
    }
    options.keys.anyExist().then((exist) => {
      keysExist ||= exist;
      if (!keysExist || verdictOn(request, reply, access)) done(null, payload);
    }, (err: Error) => done(err));
  });
}

export default fp(apiKeyAuth, { name: 'sdc-api-key-auth' });
