import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { roleUploads, type KeyRole, type KeyStore } from '../catalog/index.js';
import { API_KEY_INVALID, API_KEY_MISSING, API_KEY_NOT_CURATOR, API_KEY_READ_ONLY, API_KEY_REVOKED, raise } from '../errors/index.js';
import { sendError } from './error-answer.js';
import { presentedKey } from './presented-key.js';
import { presentedToken, signedInRefusal, type CallerVerdict } from './oidc/signed-in-access.js';
import type { TokenVerifier } from './oidc/token-verifier.js';
import type { AccessClass } from './route-access.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Name of the API key the request was authenticated with, if any. */
    apiKeyName?: string;
    /** Role of that key (docs/api.md, "API keys"), beside its name. */
    apiKeyRole?: KeyRole;
    /** The verdict on the key or token the request presented, when its route's class looks at keys. */
    keyVerdict?: CallerVerdict;
    /** The access class of the route the request matched, read once by the key check's first hook. */
    accessClass?: AccessClass;
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
  /** Bearer tokens of the institution's provider (oidc/token-verifier.ts), when SDC_OIDC_ISSUER is set. */
  readonly tokens?: TokenVerifier;
}

export const messages = {
  missing: API_KEY_MISSING.message,
  invalid: API_KEY_INVALID.message,
  revoked: API_KEY_REVOKED.message,
} as const;

/** What each class that can need a key calls its calls, for the 401 message. */
const ACTION: Partial<Record<AccessClass, string>> = { upload: 'upload', curator: 'correct the archive', read: 'query or download' };

/** The class of the route the request matched; unmatched requests (404) are public. */
function accessOf(request: FastifyRequest): AccessClass {
  return request.routeOptions.config.access ?? 'public';
}

/**
 * Who may call what, decided on the matched route's access class (route-access.ts):
 * `upload` needs a key as soon as any key has ever been created (or always, with
 * SDC_REQUIRE_KEYS); `read` needs one only with SDC_READ_NEEDS_KEY; the other classes
 * never look at API keys (public needs none; signed and operator routes carry their own
 * proof). `curator` always needs a key, and a curator's: keys being off (none created yet)
 * opens no correction to anyone. 401 = no key sent, 403 = a wrong, revoked or uploader one.
 *
 * Two steps, so that the rate limit (rate-limit.ts) sits between them: `onRequest`
 * verifies a presented key (the limit then counts per verified key, else per address,
 * so invented keys share their sender's budget), and `preParsing` refuses.
 */
async function apiKeyAuth(app: FastifyInstance, options: ApiKeyAuthOptions): Promise<void> {
  // Keys are revoked, never deleted: once one exists, keys are required for good (so only
  // "required" is remembered; until then each request that needs a key asks the catalog).
  // A configured provider closes uploads to callers without a credential, as a first key does.
  let keysExist = options.requireKeys || options.tokens !== undefined;
  const needsKey = (access: AccessClass) => access === 'upload' || (access === 'read' && options.readNeedsKey);
  // A key sent to a read route is verified even where reads are open: its holder gets the key's rate budget.
  const takesKey = (access: AccessClass) => access === 'upload' || access === 'curator' || access === 'read';


  const noted = (request: FastifyRequest, reply: FastifyReply, verdict: CallerVerdict): void => {
    request.keyVerdict = verdict;
    if (verdict.kind === 'valid' || verdict.kind === 'token') {
      request.apiKeyName = verdict.name;
      request.apiKeyRole = verdict.role;
      // Every later log line of this request says whose key it was (pino's loggers bind in place).
      const log = request.log as FastifyBaseLogger & { setBindings?(bindings: object): void };
      if (log.setBindings) log.setBindings({ api_key: verdict.name });
      else request.log = reply.log = log.child({ api_key: verdict.name });
    }
  };

  // Callback-style hooks: a route that takes no key, a request that sends none, or a key store
  // that answers at once (SQLite) passes straight on, with no promise made for it.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    // Read once: Fastify builds a new routeOptions object at each read.
    const access = (request.accessClass = accessOf(request));
    // A browser's CORS preflight never carries the key; the request that follows does.
    if (request.method === 'OPTIONS' || !takesKey(access)) return done();
    const key = presentedKey(request);
    if (key === undefined) return done();
    let verdict: CallerVerdict | Promise<CallerVerdict>;
    // A JWT goes to the provider's keys when a provider is configured; any other value is tried as an API key.
    const token = options.tokens && presentedToken(request);
    try {
      verdict = token ? options.tokens!.verify(token) : options.keys.check(key);
    } catch (err) {
      return done(err as Error);
    }
    if (!(verdict instanceof Promise)) {
      noted(request, reply, verdict);
      return done();
    }
    verdict.then((v) => {
      noted(request, reply, v);
      done();
    }, done);
  });

  const verdictOn = (request: FastifyRequest, reply: FastifyReply, access: AccessClass): boolean => {
    const verdict = request.keyVerdict;
    if (verdict === undefined) sendError(reply, raise(API_KEY_MISSING, [ACTION[access]!, options.missionName], { headers: { 'WWW-Authenticate': 'Bearer' } }));
    else if (verdict.kind === 'invalid') sendError(reply, API_KEY_INVALID.create());
    else if (verdict.kind === 'revoked') sendError(reply, API_KEY_REVOKED.create(verdict.name, verdict.revokedAt));
    else if (verdict.kind === 'refused') sendError(reply, verdict.error);
    else if (verdict.kind === 'token') return refusedSignedIn(reply, verdict, access);
    else if (access === 'curator' && verdict.role !== 'curator') sendError(reply, API_KEY_NOT_CURATOR.create(verdict.name, verdict.role));
    else if (access === 'upload' && !roleUploads(verdict.role)) sendError(reply, API_KEY_READ_ONLY.create(verdict.name));
    else return true;
    return false;
  };

  const refusedSignedIn = (reply: FastifyReply, verdict: CallerVerdict & { kind: 'token' }, access: AccessClass): boolean => {
    const refusal = signedInRefusal(verdict, access);
    if (refusal) sendError(reply, refusal);
    return refusal === undefined;
  };

  app.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    const access = request.accessClass ?? accessOf(request);
    if (request.method === 'OPTIONS') return done(null, payload);
    // A token that fails verification is refused wherever it is sent, open reads included: its
    // holder must learn to sign in again, not get an anonymous answer (docs/trust.md, "Signed-in callers").
    if (request.keyVerdict?.kind === 'refused') return void sendError(reply, request.keyVerdict.error);
    if (access === 'curator') {
      if (verdictOn(request, reply, access)) done(null, payload);
      return;
    }
    if (!needsKey(access)) return done(null, payload);
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
