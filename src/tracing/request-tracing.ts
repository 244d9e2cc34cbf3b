import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../service/index.js';

/**
 * Tracing as the rest of the server sees it (docs/deploy.md, "Tracing"): a span per
 * request, with child spans for the catalog's and the store's calls. Off unless
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; then, and only then, the OpenTelemetry SDK is loaded
 * (otel-tracing.ts), so an instance without it pays nothing.
 */
export interface RequestTracing {
  /** The request span's hooks; first of all, so that every hook after them runs inside it. */
  register(app: FastifyInstance): void;
  /** The context with its catalog and store traced: a child span per call made for a request. */
  traced(ctx: ServiceContext): ServiceContext;
  /** Sends the spans buffered so far: after each invocation on Lambda, whose container is frozen between them. */
  flush(): Promise<void>;
  /** Sends the spans still buffered; at shutdown. */
  shutdown(): Promise<void>;
}

/** The tracing the environment asks for: none without OTEL_EXPORTER_OTLP_ENDPOINT. */
export async function requestTracingFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<RequestTracing | undefined> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const { startOtelTracing } = await import('./otel-tracing.js');
  return startOtelTracing();
}

/** A W3C traceparent: version, trace id, parent id, flags (docs/deploy.md, "Tracing"). */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;
const NO_TRACE = '0'.repeat(32);

/** The trace id of each request whose span is recorded (otel-tracing.ts writes it). */
export const spanTraceIds = new WeakMap<FastifyRequest, string>();

/**
 * The trace id the access line carries: that of the request's span when tracing is on,
 * else the one the client or proxy sent in `traceparent`, so the line still joins their trace.
 */
export function traceIdOf(request: FastifyRequest): string | undefined {
  const recorded = spanTraceIds.get(request);
  if (recorded !== undefined) return recorded;
  const header = request.headers.traceparent;
  if (typeof header !== 'string') return undefined;
  const id = TRACEPARENT.exec(header.trim())?.[1];
  return id === NO_TRACE ? undefined : id;
}
