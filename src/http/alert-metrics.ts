import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ConnectionPoolUse } from '../catalog/index.js';
import { ERROR_CODE_HEADER } from '../errors/index.js';
import type { ServiceContext } from '../service/index.js';
import type { SpaceReading } from '../store/index.js';

/** name and version of this package; src/http and dist/http both sit two levels below it. */
const PACKAGE = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The series the alert rules and the dashboard read (deploy/prometheus, deploy/grafana;
 * docs/deploy.md "Alerts") beyond the HTTP ones of request-counts.ts: the running version, answers by
 * error code, the local store's free space, the catalog's connection pools and the live feeds'
 * lag. Each is read when /metrics is scraped, from what the parts already know; only the error
 * counter adds work to a request, and only to one answered with an error.
 */
export function registerAlertMetrics(app: FastifyInstance, registry: Registry, ctx: ServiceContext): void {
  new Gauge({
    name: 'sdc_build_info',
    help: 'The running version (always 1): which instances run which release during an upgrade',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: PACKAGE.version }, 1);

  const errors = new Counter({
    name: 'sdc_http_errors_total',
    help: 'Answers with an error code (X-Error-Code), by code: SDC_RATE_LIMITED, SDC_LOW_SPACE, ... (docs/api.md "Error codes")',
    labelNames: ['code'],
    registers: [registry],
  });
  app.addHook('onResponse', (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // Declared codes only (a bounded set), and only on errors: a success pays one comparison.
    if (reply.statusCode >= 400) {
      const code = reply.getHeader(ERROR_CODE_HEADER);
      if (typeof code === 'string') errors.inc({ code });
    }
    done();
  });

  // The local store's file system (docs/deploy.md "Free space"); absent on S3, which has no disk here.
  const space = (name: string, help: string, pick: (r: SpaceReading) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const reading = ctx.store.space?.reading();
        if (reading === undefined) this.reset();
        else this.set(pick(reading));
      },
    });
  space('sdc_store_free_bytes', 'Free bytes on the local store\'s file system (what the service may still write)', (r) => r.free);
  space('sdc_store_size_bytes', 'Size of the local store\'s file system, bytes', (r) => r.size);
  space('sdc_store_min_free_bytes', 'The free-space watermark (SDC_MIN_FREE), bytes: below it new uploads are refused with 507', (r) => r.minFree);
  space('sdc_store_low_space', 'Whether the local store is under its free-space watermark and refuses new uploads (1) or not (0)', (r) => (r.low ? 1 : 0));

  // The catalog's connection pools (PostgreSQL); absent on SQLite, which has none.
  const pool = (name: string, help: string, pick: (use: ConnectionPoolUse) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.reset();
        for (const use of ctx.catalog.connectionPools?.() ?? []) this.set({ pool: use.pool }, pick(use));
      },
    });
  pool('sdc_catalog_pool_max', 'Most connections the catalog\'s pool may open', (use) => use.max);
  pool('sdc_catalog_pool_open', 'Connections the catalog\'s pool has open, busy or idle', (use) => use.open);
  pool('sdc_catalog_pool_busy', 'Connections of the catalog\'s pool running a query or transaction', (use) => use.open - use.idle);
  pool('sdc_catalog_pool_waiting', 'Queries waiting for a connection of the catalog\'s pool (saturated)', (use) => use.waiting);

  // The live feeds (GET /events) of this process: how far behind the change log the furthest is.
  new Gauge({
    name: 'sdc_feeds_open',
    help: 'Live feeds (GET /events) open on this instance',
    registers: [registry],
    collect() {
      this.set(ctx.activity?.feeds.size ?? 0);
    },
  });
  new Gauge({
    name: 'sdc_feed_lag_seconds',
    help: 'How long the change log has held an entry that the furthest-behind open feed has not sent (0: every feed is at the log\'s end)',
    registers: [registry],
    collect() {
      const now = Date.now();
      let oldest = now;
      for (const feed of ctx.activity?.feeds ?? []) if (feed.behindSince !== undefined && feed.behindSince < oldest) oldest = feed.behindSince;
      this.set((now - oldest) / 1000);
    },
  });
}
