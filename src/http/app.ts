import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ServiceContext } from '../service/index.js';
import { LocalObjectStore, type UrlSigner } from '../store/index.js';
import { AccessLog } from './access-log.js';
import { apiRoutes } from './api-routes.js';
import { registerCors, type CorsOrigin } from './cors.js';
import { earlierFormRoutes } from './earlier-form-routes.js';
import { feedRoute } from './feed-route.js';
import { frameworkErrors } from './framework-errors.js';
import { registerOpenApi } from './openapi.js';
import { opsRoutes } from './ops-routes.js';
import { echoRequestId, requestId } from './request-id.js';
import { coverageRoute } from './coverage-route.js';
import { portalPlugin } from './portal-plugin.js';
import { storeRoutes } from './store-routes.js';
import { unmatchedRoutes } from './unmatched-routes.js';

export interface AppOptions {
  readonly ctx: ServiceContext;
  /** Needed when the store is the local one, which serves its own signed addresses. */
  readonly signer?: UrlSigner;
  /** Request logs go here (see src/logger.ts); none when absent. */
  readonly logger?: FastifyBaseLogger;
  /** Origins allowed by CORS (SDC_CORS_ORIGIN); `*` by default. */
  readonly corsOrigin?: CorsOrigin;
}

/** Longest path parameter accepted: long enough for any real path, far below Node's header limit. */
const MAX_PARAM_LENGTH = 8 * 1024;

/** The Fastify application: routes -> service, envelope -> response. */
export async function buildApp({ ctx, signer, logger, corsOrigin = '*' }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : {}),
    genReqId: requestId,
    logController: new AccessLog(),
    frameworkErrors,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Keep-alive sockets must not outlive a graceful close for long.
    forceCloseConnections: 'idle',
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return reply.code(500).type('text/plain; charset=utf-8').send(`Internal error (request ${request.id}).`);
    }
    return reply.code(status).type('text/plain; charset=utf-8').send(error.message);
  });

  echoRequestId(app);
  const unmatched = unmatchedRoutes(app);
  await registerCors(app, corsOrigin);
  await registerOpenApi(app, ctx.mission);

  await app.register(apiRoutes(ctx));
  await app.register(feedRoute(ctx));
  await app.register(earlierFormRoutes(ctx), { prefix: '/v0' });
  await app.register(opsRoutes(ctx));
  await app.register(coverageRoute(ctx));
  await app.register(portalPlugin(ctx.mission));
  if (ctx.store instanceof LocalObjectStore) {
    if (!signer) throw new Error('the local store needs a signer');
    await app.register(storeRoutes(ctx, ctx.store, signer));
  }
  unmatched.answer();
  return app;
}
