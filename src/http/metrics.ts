import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Catalog } from '../catalog/index.js';

export interface MetricsOptions {
  readonly catalog: Catalog;
}

const starts = new WeakMap<FastifyRequest, bigint>();

/**
 * Socket byte counts at the end of the last answer on each connection: a request's
 * wire bytes are what the socket read and wrote since (keep-alive runs requests one
 * after another on a socket), headers included, whatever the transfer encoding.
 */
const counted = new WeakMap<object, { read: number; written: number }>();

/** The route a request matched (its pattern, never the raw path: bounded label values). */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

/**
 * `GET /metrics` in Prometheus text format (prom-client), one registry per app so that
 * several servers in one process keep their own counts. Everything is derived from
 * requests and their answers, so no route needs to know metrics exist.
 */
async function metricsPlugin(app: FastifyInstance, { catalog }: MetricsOptions): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sdc_' });
  const m = {
    requests: new Counter({
      name: 'sdc_http_requests_total',
      help: 'HTTP requests answered, by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'sdc_http_request_duration_seconds',
      help: 'Time from request to the end of the answer, by method and route',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    bytesIn: new Counter({
      name: 'sdc_http_received_bytes_total',
      help: 'Request bytes read from clients (request line, headers and body), by route',
      labelNames: ['route'],
      registers: [registry],
    }),
    bytesOut: new Counter({
      name: 'sdc_http_sent_bytes_total',
      help: 'Response bytes written to clients (headers and body), by route',
      labelNames: ['route'],
      registers: [registry],
    }),
    stored: new Counter({ name: 'sdc_uploads_stored_total', help: 'Files stored by PUT to a signed address', registers: [registry] }),
    conflicts: new Counter({ name: 'sdc_upload_conflicts_total', help: 'Uploads refused because the file exists (409)', registers: [registry] }),
    signatureFailures: new Counter({
      name: 'sdc_signature_failures_total',
      help: 'Signed store addresses refused: bad or expired signature (403)',
      registers: [registry],
    }),
    keyFailures: new Counter({
      name: 'sdc_api_key_failures_total',
      help: 'Requests refused for their API key: missing (401) or wrong/revoked (403)',
      labelNames: ['reason'],
      registers: [registry],
    }),
  };
  new Gauge({
    name: 'sdc_catalog_files',
    help: 'Records in the catalog',
    registers: [registry],
    async collect() {
      this.set(await catalog.count({}));
    },
  });

  app.addHook('onRequest', async (request) => {
    starts.set(request, process.hrtime.bigint());
  });

  app.addHook('onResponse', async (request, reply) => {
    const start = starts.get(request);
    const route = routeOf(request);
    const status = reply.statusCode;
    m.requests.inc({ method: request.method, route, status: String(status) });
    if (start !== undefined) m.duration.observe({ method: request.method, route }, Number(process.hrtime.bigint() - start) / 1e9);
    const socket = request.raw.socket;
    if (socket) {
      const before = counted.get(socket) ?? { read: 0, written: 0 };
      m.bytesIn.inc({ route }, Math.max(0, socket.bytesRead - before.read));
      m.bytesOut.inc({ route }, Math.max(0, socket.bytesWritten - before.written));
      counted.set(socket, { read: socket.bytesRead, written: socket.bytesWritten });
    }
    const store = route === '/store/*';
    if (store && request.method === 'PUT' && status === 200) m.stored.inc();
    if (status === 409) m.conflicts.inc();
    if (store && status === 403) m.signatureFailures.inc();
    if (!store && status === 401) m.keyFailures.inc({ reason: 'missing' });
    if (!store && status === 403) m.keyFailures.inc({ reason: 'refused' });
  });

  app.get('/metrics', { config: { access: 'read' } }, async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}

export default fp(metricsPlugin, { name: 'sdc-metrics' });
