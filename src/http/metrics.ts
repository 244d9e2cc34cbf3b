import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { ServiceContext } from '../service/index.js';
import { registerAlertMetrics } from './alert-metrics.js';
import { registerBackendGauges } from './backend-gauges.js';
import { requestCounts } from './request-counts.js';

export interface MetricsOptions {
  readonly ctx: ServiceContext;
}

/**
 * `GET /metrics` in Prometheus text format, one registry per app so that several servers in
 * one process keep their own counts. Everything is derived from requests and their answers, so
 * no route needs to know metrics exist. The HTTP series are counted and written by
 * request-counts.ts; the process's default metrics, the alerting series and the backends' gauges
 * come from prom-client's registry.
 */
async function metricsPlugin(app: FastifyInstance, { ctx }: MetricsOptions): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sdc_' });
  registerAlertMetrics(app, registry, ctx);
  registerBackendGauges(registry, ctx);
  const counts = requestCounts(ctx);
  app.addHook('onResponse', counts.count);

  app.get('/metrics', { config: { access: 'read' } }, async (_request, reply) =>
    reply.type(registry.contentType).send(`${counts.text()}\n${await registry.metrics()}`),
  );
}

export default fp(metricsPlugin, { name: 'sdc-metrics' });
