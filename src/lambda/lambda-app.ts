import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config.js';
import { buildApp } from '../http/app.js';
import type { ServiceContext } from '../service/index.js';
import type { RequestTracing } from '../tracing/request-tracing.js';
import { capStreamedAnswers, MAX_LAMBDA_BODY_BYTES } from './collect-body.js';
import { feedNotServedRoute } from './feed-not-served.js';

export interface LambdaAppOptions {
  readonly ctx: ServiceContext;
  /** The settings `sdc serve` reads (keys, CORS, limits, events token), from the same variables. */
  readonly config: Pick<
    ServerConfig,
    'corsOrigin' | 'requireKeys' | 'readNeedsKey' | 'rateLimit' | 'maxObjectSize' | 'requestTimeout' | 'idleTimeout' | 'eventsToken' | 'eventsTokenPrevious' | 'publicUrl' | 'oidc'
  >;
  readonly logger?: FastifyBaseLogger;
  /** Largest body one answer may carry (tests make it small). */
  readonly maxBodyBytes?: number;
  /** Runs when the app closes (what the caller opened for it, e.g. the catalog). */
  readonly onClose?: () => Promise<void>;
  /** A span per request, as `sdc serve` makes them (request-tracing.ts); `ctx` already traced by it. */
  readonly tracing?: RequestTracing | undefined;
}

/** The tracing of each app built here, whose spans the handler sends before the invocation ends (api-handler.ts). */
export const lambdaAppTracing = new WeakMap<FastifyInstance, RequestTracing>();

/**
 * The server's own Fastify app (src/http/app.ts: every route, hook, key check, CORS
 * policy and error message) on the Lambda container's backends, for API Gateway events
 * to be injected into. Two things differ, both because Lambda answers in one piece: the
 * live feed answers that it is not served here (feed-not-served.ts), and streamed
 * answers are collected, up to a size a Lambda answer can carry (collect-body.ts).
 */
export async function buildLambdaApp({ ctx, config, logger, maxBodyBytes = MAX_LAMBDA_BODY_BYTES, onClose, tracing }: LambdaAppOptions): Promise<FastifyInstance> {
  const app = await buildApp({
    ctx,
    ...(logger ? { logger } : {}),
    corsOrigin: config.corsOrigin,
    trust: { ...config, keys: ctx.catalog.keys() },
    eventsToken: config.eventsToken,
    publicUrl: config.publicUrl,
    ...(config.eventsTokenPrevious === undefined ? {} : { eventsTokenPrevious: config.eventsTokenPrevious }),
    feed: feedNotServedRoute,
    tracing,
  });
  if (tracing) lambdaAppTracing.set(app, tracing);
  capStreamedAnswers(app, maxBodyBytes);
  if (onClose) app.addHook('onClose', onClose);
  await app.ready();
  return app;
}
