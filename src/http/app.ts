import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';
import type { LocalObjectStore, UrlSigner } from '../store/index.js';
import { AccessLog } from './access-log.js';
import { buildValidator } from './body-validation.js';
import type { KeyStore } from '../catalog/index.js';
import { apiRoutes } from './api-routes.js';
import { releaseRoutes } from './release-routes.js';
import { registerCors, type CorsOrigin } from './cors.js';
import { earlierFormRoutes } from './earlier-form-routes.js';
import { feedRoute } from './feed-route.js';
import { frameworkErrors } from './framework-errors.js';
import { errorHandler } from './error-answer.js';
import { registerOpenApi } from './openapi.js';
import { multipartRoutes } from './multipart-routes.js';
import { opsRoutes } from './ops-routes.js';
import { echoRequestId, requestId } from './request-id.js';
import { requestLogFactory } from './request-log.js';
import { coverageRoute } from './coverage-route.js';
import { changesRoute } from './changes-route.js';
import { trustProxies } from './client-address.js';
import { portalPlugin } from './portal-plugin.js';
import './public-links.js';
import { routeAccess, type AccessEntry } from './route-access.js';
import apiKeyAuth from './api-key-auth.js';
import { providerKeys } from './oidc/provider-keys.js';
import { TokenVerifier } from './oidc/token-verifier.js';
import { signInRoutes } from './oidc/sign-in-routes.js';
import type { OidcSettings } from '../oidc-config.js';
import gracefulClose from './graceful-close.js';
import limits, { serverLimits, type LimitSettings } from './limits.js';
import metrics from './metrics.js';
import rateLimit from './rate-limit.js';
import { s3EventsRoute } from './s3-events-route.js';
import { refuseRepeatedParameters } from './repeated-parameters.js';
import { storeRoutes, validlySigned } from './store-routes.js';
import { unmatchedRoutes } from './unmatched-routes.js';
import type { RequestTracing } from '../tracing/request-tracing.js';

export interface AppOptions {
  readonly ctx: ServiceContext;
  /** The local store and its signer, when the store serves its own signed addresses (/store/...). */
  readonly signedAddresses?: { readonly store: LocalObjectStore; readonly signer: UrlSigner };
  /** Request logs go here (see src/logger.ts); none when absent. */
  readonly logger?: FastifyBaseLogger;
  /** Origins allowed by CORS (SDC_CORS_ORIGIN); `*` by default. */
  readonly corsOrigin?: CorsOrigin;
  /** Keys, limits and metrics (see README "Trust"); none of them when absent. */
  readonly trust?: TrustSettings;
  /** Shared secret of POST /events/s3 (SDC_EVENTS_TOKEN); unset = disabled. */
  readonly eventsToken?: string;
  /** Reverse proxies whose X-Forwarded-For / Forwarded are believed (SDC_TRUSTED_PROXIES, client-address.ts). */
  readonly trustedProxies?: readonly string[];
  /** The token before a rotation, accepted too (SDC_EVENTS_TOKEN_PREVIOUS). */
  readonly eventsTokenPrevious?: string;
  /** What serves GET /events: the live feed, unless a carrier that cannot stream (Lambda) says otherwise. */
  readonly feed?: typeof feedRoute;
  /** SDC_PUBLIC_URL: the base of links the server writes (public-links.ts); relative links when absent. */
  readonly publicUrl?: string;
  /** A span per request, when OTEL_EXPORTER_OTLP_ENDPOINT is set (request-tracing.ts). */
  readonly tracing?: RequestTracing | undefined;
}

export interface TrustSettings extends LimitSettings {
  readonly keys: KeyStore;
  readonly requireKeys: boolean;
  readonly readNeedsKey: boolean;
  /** Requests per minute per key or address; 0 = off. */
  readonly rateLimit: number;
  /** The institution's OpenID Connect provider, whose Bearer tokens are accepted beside keys (SDC_OIDC_*). */
  readonly oidc?: OidcSettings | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route with its access class (route-access.ts). */
    accessTable(): readonly AccessEntry[];
  }
}

/**
 * True when the client's connection is gone: there is no one left to answer. A request
 * whose body was read to its end is destroyed too (autoDestroy), and its client still waits.
 */
function clientGone(request: { raw: { destroyed: boolean; complete: boolean; socket: { destroyed: boolean } | null } }): boolean {
  return (request.raw.destroyed && !request.raw.complete) || request.raw.socket?.destroyed === true;
}

/** Longest path parameter accepted: long enough for any real path, far below Node's header limit. */
const MAX_PARAM_LENGTH = 8 * 1024;

/** The Fastify application: routes -> service, envelope -> response. */
export async function buildApp({ ctx, signedAddresses, logger, corsOrigin = '*', trust, eventsToken, eventsTokenPrevious, trustedProxies = [], feed = feedRoute, publicUrl, tracing }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : {}),
    ...(trust ? serverLimits(trust) : {}),
    genReqId: requestId,
    logController: new AccessLog(),
    // Made on first use: most requests log only their access line, which needs no pino child.
    childLoggerFactory: requestLogFactory,
    frameworkErrors,
    // Bodies are checked as sent, never coerced (body-validation.ts).
    schemaController: { compilersFactory: { buildValidator } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Keep-alive sockets must not outlive a graceful close for long.
    forceCloseConnections: 'idle',
  });

  // Before every other hook, so that they and the handler run inside the request's span.
  tracing?.register(app);
  // Before any hook or route asks who the client is (logs, rate limit, feed cap).
  trustProxies(app, trustedProxies);
  // First of all, so that it sees every route: each must say who may call it.
  const access = routeAccess(app);
  app.decorate('accessTable', access.table);
  app.decorate('publicUrl', publicUrl);

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    if (clientGone(request)) {
      // Nobody to answer: the client closed its connection (an aborted upload, say). Not our fault.
      request.log.info({ reason: error.message }, 'client closed the connection before the answer');
      reply.hijack();
      reply.raw.destroy();
      return;
    }
    return errorHandler(error, request, reply);
  });

  echoRequestId(app);
  const unmatched = unmatchedRoutes(app);
  // Plugins that add routes of their own (CORS preflight, the API description's page): public.
  // CORS first: its headers are on every answer, refusals included; preflights go on to the rate limit (cors.ts).
  await access.declare('public', () => registerCors(app, corsOrigin));
  if (trust) {
    // Key verification, then the rate limit (onRequest, app-wide): before every route, so
    // /metrics, the API description, CORS preflights, 404 and 405 spend the budget too (rate-limit.ts).
    // One verifier per app: the provider's keys are cached for the process (a Lambda container's too).
    const tokens = trust.oidc ? new TokenVerifier(trust.oidc, providerKeys(trust.oidc.issuer)) : undefined;
    await app.register(apiKeyAuth, { ...trust, missionName: ctx.mission.name, ...(tokens ? { tokens } : {}) });
    // Validly signed store requests spend no budget: their signing API request did (docs/client.md, "Pacing").
    await app.register(rateLimit, { perMinute: trust.rateLimit, exempt: signedAddresses ? validlySigned(signedAddresses.signer) : undefined });
  }
  await access.declare('public', () => registerOpenApi(app, ctx.mission));

  await app.register(gracefulClose);
  if (trust) {
    // Metrics count every answer by its status (onResponse), refusals by the hooks above included.
    await app.register(metrics, { ctx });
    // The key's verdict and the body limits (preParsing): see api-key-auth.ts and limits.ts.
    await app.register(limits, trust);
  }
  // After the key check and the rate limit: a refusal spends the budget like any request.
  app.addHook('onRequest', refuseRepeatedParameters);
  await app.register(apiRoutes(ctx));
  await app.register(multipartRoutes(ctx));
  await app.register(feed(ctx));
  await app.register(earlierFormRoutes(ctx), { prefix: '/v0' });
  await app.register(opsRoutes(ctx));
  await app.register(coverageRoute(ctx));
  await app.register(changesRoute(ctx));
  await app.register(releaseRoutes(ctx));
  await app.register(signInRoutes(trust?.oidc));
  await access.declare('public', () => app.register(portalPlugin(ctx.mission)));
  await app.register(s3EventsRoute(ctx, eventsToken, eventsTokenPrevious));
  if (signedAddresses) await app.register(storeRoutes(ctx, signedAddresses.store, signedAddresses.signer));
  unmatched.answer();
  return app;
}
