import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { defaultTextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { FastifyRequest } from 'fastify';
import { spanTraceIds, type RequestTracing } from './request-tracing.js';

/** Loaded only when tracing is on (request-tracing.ts). */

const SERVICE_NAME = 'sdc-data-access';

/**
 * The span of the request being served, for the catalog's and store's calls. Set with
 * enterWith in the request's hooks: the body is read from socket events, which do not carry
 * a context made around the first hook, so the handler's hook sets it again.
 */
const current = new AsyncLocalStorage<Context>();

export function startOtelTracing(): RequestTracing {
  // The exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout) itself; the
  // provider OTEL_TRACES_SAMPLER and OTEL_BSP_*; the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const tracer = provider.getTracer(SERVICE_NAME);
  const propagator = new W3CTraceContextPropagator();
  const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

  const finish = (request: FastifyRequest, status: number | undefined) => {
    const entry = spans.get(request);
    if (!entry) return;
    spans.delete(request);
    const route = request.routeOptions.url;
    if (route !== undefined) {
      entry.span.updateName(`${request.method} ${route}`);
      entry.span.setAttribute('http.route', route);
    }
    if (status === undefined) entry.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
    else {
      entry.span.setAttribute('http.response.status_code', status);
      if (status >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    entry.span.end();
  };

  return {
    register(app) {
      app.addHook('onRequest', (request, _reply, done) => {
        // The span of a client's or proxy's traceparent is the parent (docs/deploy.md, "Tracing").
        const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
        const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.url.split('?', 1)[0] } }, parent);
        const context = trace.setSpan(parent, span);
        spans.set(request, { span, context });
        if (span.isRecording()) spanTraceIds.set(request, span.spanContext().traceId);
        current.enterWith(context);
        done();
      });
      app.addHook('preHandler', (request, _reply, done) => {
        const entry = spans.get(request);
        if (entry) current.enterWith(entry.context);
        done();
      });
      app.addHook('onResponse', (request, reply, done) => {
        finish(request, reply.statusCode);
        done();
      });
      app.addHook('onRequestAbort', (request, done) => {
        finish(request, undefined);
        done();
      });
    },
    traced(ctx) {
      return { ...ctx, catalog: traced(ctx.catalog, 'catalog', tracer), store: traced(ctx.store, 'store', tracer) };
    },
    async flush() {
      await provider.forceFlush();
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

/**
 * The port with a child span around each call made while a request is served: named
 * `catalog.<method>` or `store.<method>`, ended when the call's promise settles.
 */
function traced<T extends object>(port: T, kind: 'catalog' | 'store', tracer: Tracer): T {
  return new Proxy(port, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const parent = current.getStore();
        // Outside a request (the sweeper, start-up): no span.
        if (parent === undefined) return method.apply(target, args);
        const span = tracer.startSpan(`${kind}.${key}`, { kind: SpanKind.CLIENT }, parent);
        try {
          const result = method.apply(target, args);
          if (result instanceof Promise) {
            return result.then(
              (settled: unknown) => (span.end(), settled),
              (err: unknown) => {
                failed(span, err);
                throw err;
              },
            );
          }
          span.end();
          return result;
        } catch (err) {
          failed(span, err);
          throw err;
        }
      };
    },
  });
}

function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}

