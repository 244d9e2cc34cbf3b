import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Catalog } from '../catalog/index.js';
import type { ServiceContext } from '../service/index.js';
import { registerAlertMetrics } from './alert-metrics.js';
import { checkDependencies, ingestBacklog, withinCheckTime } from './dependency-checks.js';

export interface MetricsOptions {
  readonly ctx: ServiceContext;
}

/** Upper bounds (seconds) of the request duration histogram's buckets. */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** What is counted of one (method, route): plain numbers, turned into Prometheus text only on scrape. */
interface RouteCounts {
  readonly method: string;
  readonly route: string;
  /** Answers by status code. */
  readonly statuses: Map<number, number>;
  /** Non-cumulative: buckets[i] counts durations in (BUCKETS[i-1], BUCKETS[i]]; the last slot is above them all. */
  readonly buckets: number[];
  seconds: number;
  count: number;
  bytesIn: number;
  bytesOut: number;
}

/**
 * Socket byte counts at the end of the last answer on each connection: a request's wire bytes
 * are what the socket read and wrote since (keep-alive runs requests one after another on a
 * socket), headers included, whatever the transfer encoding. Kept on the socket itself.
 */
const READ = Symbol('sdc.metrics.read');
const WRITTEN = Symbol('sdc.metrics.written');
type CountedSocket = { bytesRead: number; bytesWritten: number; [READ]?: number; [WRITTEN]?: number };

/** A label value in the text format: backslash, double quote and newline escaped. */
function label(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/**
 * `GET /metrics` in Prometheus text format, one registry per app so that several servers in
 * one process keep their own counts. Everything is derived from requests and their answers, so
 * no route needs to know metrics exist.
 *
 * Per request the cost is one synchronous onResponse hook that adds to plain counters of its
 * (method, route): no label hashing, no histogram object, no timer of its own (Fastify's
 * elapsed time is used). The counters become Prometheus text when /metrics is scraped: the
 * HTTP series are written here; the process's default metrics and the catalog's size come
 * from prom-client's registry.
 */
/** How often a scrape may count the catalog's records anew; between, the last count is answered. */
export const CATALOG_COUNT_EVERY_MS = 60_000;

/**
 * How long one check of the dependencies stands: scrapes within it answer its result instead of
 * pinging the catalog and the store again (several Prometheus servers, or a dashboard, scrape
 * every instance). Short, so that an outage shows within a scrape interval or two.
 */
export const DEPENDENCIES_EVERY_MS = 5_000;

async function metricsPlugin(app: FastifyInstance, { ctx }: MetricsOptions): Promise<void> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sdc_' });
  registerAlertMetrics(app, registry, ctx);
  // A scrape always answers, most of all while a dependency is down: what cannot be read is
  // left out (the catalog's size) and said in sdc_dependency_up, never a failed scrape.
  new Gauge({
    name: 'sdc_catalog_files',
    help: 'Records in the catalog (absent while the catalog does not answer)',
    registers: [registry],
    // Counting the whole catalog costs work proportional to the archive: at most once a
    // CATALOG_COUNT_EVERY_MS, however often /metrics is scraped (docs/trust.md "Rate limit").
    async collect() {
      // Between counts the last count stands; while the catalog does not answer, it is left out.
      try {
        if (Date.now() - counted.at >= CATALOG_COUNT_EVERY_MS) {
          counted.files = await withinCheckTime(() => ctx.catalog.count({}));
          counted.at = Date.now();
        }
        this.set(counted.files);
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_dependency_up',
    help: `Whether the catalog and the object store answered their last check (1) or not (0), checked at most every ${DEPENDENCIES_EVERY_MS / 1000} s`,
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      // Scrapes at once, or within DEPENDENCIES_EVERY_MS of a check, share that check.
      if (Date.now() - checked.at >= DEPENDENCIES_EVERY_MS) checked = { at: Date.now(), results: checkDependencies(ctx) };
      const results = await checked.results;
      this.set({ dependency: 'catalog' }, results.catalog === 'ok' ? 1 : 0);
      this.set({ dependency: 'store' }, results.store === 'ok' ? 1 : 0);
    },
  });
  // Fixity audits (docs/deploy.md "Fixity audits"): what the catalog's records say, read from
  // the indexes (Catalog.fixityStatus: a few index probes), at most every DEPENDENCIES_EVERY_MS;
  // the count of verified files costs as much as the catalog's size, so it is cached as long.
  // Files and bytes read by a run are in that run's summary and log: the server runs no audit.
  let fixity: { at: number; status: ReturnType<Catalog['fixityStatus']> } | undefined;
  const fixityStatus = () => {
    if (fixity === undefined || Date.now() - fixity.at >= DEPENDENCIES_EVERY_MS) {
      fixity = { at: Date.now(), status: withinCheckTime(() => ctx.catalog.fixityStatus()) };
      fixity.status.catch(() => {});
    }
    return fixity.status;
  };
  new Gauge({
    name: 'sdc_fixity_failed_files',
    help: 'Files whose last fixity audit found their stored bytes changed (mismatch) or gone (missing); never served until restored',
    labelNames: ['fixity'],
    registers: [registry],
    async collect() {
      try {
        const status = await fixityStatus();
        this.set({ fixity: 'mismatch' }, status.mismatch);
        this.set({ fixity: 'missing' }, status.missing);
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_fixity_oldest_verification_age_seconds',
    help: 'Age of the oldest fixity verification of any file (absent until a file is verified; see sdc_fixity_never_verified)',
    registers: [registry],
    async collect() {
      try {
        const { oldestVerified } = await fixityStatus();
        if (oldestVerified === undefined) this.reset();
        else this.set(Math.max(0, (Date.now() - Date.parse(oldestVerified)) / 1000));
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_fixity_never_verified',
    help: 'Whether some file has never been verified by a fixity audit (1) or none (0): the audit has not yet gone round once',
    registers: [registry],
    async collect() {
      try {
        this.set((await fixityStatus()).neverVerified ? 1 : 0);
      } catch {
        this.reset();
      }
    },
  });
  const verified = { at: -Infinity, files: 0 };
  new Gauge({
    name: 'sdc_fixity_verified_files',
    help: `Files verified at least once by a fixity audit, counted at most every ${CATALOG_COUNT_EVERY_MS / 1000} s (as sdc_catalog_files)`,
    registers: [registry],
    async collect() {
      try {
        if (Date.now() - verified.at >= CATALOG_COUNT_EVERY_MS) {
          verified.files = await withinCheckTime(() => ctx.catalog.countVerified());
          verified.at = Date.now();
        }
        this.set(verified.files);
      } catch {
        this.reset();
      }
    },
  });
  const counted = { at: -Infinity, files: 0 };
  let checked: { at: number; results: ReturnType<typeof checkDependencies> } = { at: -Infinity, results: Promise.resolve({ catalog: 'ok', store: 'ok' }) };

  const routes: RouteCounts[] = [];
  // route -> method -> counts: the route pattern is the same string each time, so no key is built per request.
  const byRoute = new Map<string, Map<string, RouteCounts>>();
  const events = { conflicts: 0, signatureFailures: 0, keyMissing: 0, keyRefused: 0 };

  const countsOf = (method: string, route: string): RouteCounts => {
    let methods = byRoute.get(route);
    if (methods === undefined) byRoute.set(route, (methods = new Map()));
    let counts = methods.get(method);
    if (counts === undefined) {
      counts = { method, route, statuses: new Map(), buckets: new Array<number>(BUCKETS.length + 1).fill(0), seconds: 0, count: 0, bytesIn: 0, bytesOut: 0 };
      methods.set(method, counts);
      routes.push(counts);
    }
    return counts;
  };

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    // The route's pattern, never the raw path: bounded label values.
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const counts = countsOf(request.method, route);
    counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1);
    const seconds = reply.elapsedTime / 1000;
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    counts.buckets[bucket]!++;
    counts.seconds += seconds;
    counts.count++;
    const socket = request.raw.socket as CountedSocket | null;
    if (socket) {
      counts.bytesIn += Math.max(0, socket.bytesRead - (socket[READ] ?? 0));
      counts.bytesOut += Math.max(0, socket.bytesWritten - (socket[WRITTEN] ?? 0));
      socket[READ] = socket.bytesRead;
      socket[WRITTEN] = socket.bytesWritten;
    }
    const store = route === '/store/*';
    // Upload conflicts only: a download's 409 is a damaged file (docs/api.md "Damaged files"), counted by sdc_fixity_failed_files.
    if (status === 409 && !route.endsWith('download/*')) events.conflicts++;
    if (store && status === 403) events.signatureFailures++;
    if (!store && status === 401) events.keyMissing++;
    if (!store && status === 403) events.keyRefused++;
    done();
  });

  /** The HTTP series and event counters, as prom-client would write them. */
  const httpText = (): string => {
    const lines: string[] = [];
    const family = (name: string, type: 'counter' | 'gauge' | 'histogram', help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    family('sdc_http_requests_total', 'counter', 'HTTP requests answered, by method, route and status');
    for (const c of routes) {
      for (const [status, n] of c.statuses) lines.push(`sdc_http_requests_total{method="${label(c.method)}",route="${label(c.route)}",status="${status}"} ${n}`);
    }
    family('sdc_http_request_duration_seconds', 'histogram', 'Time from request to the end of the answer, by method and route');
    for (const c of routes) {
      const labels = `method="${label(c.method)}",route="${label(c.route)}"`;
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += c.buckets[i]!;
        lines.push(`sdc_http_request_duration_seconds_bucket{le="${le}",${labels}} ${cumulative}`);
      });
      lines.push(`sdc_http_request_duration_seconds_bucket{le="+Inf",${labels}} ${c.count}`);
      lines.push(`sdc_http_request_duration_seconds_sum{${labels}} ${c.seconds}`);
      lines.push(`sdc_http_request_duration_seconds_count{${labels}} ${c.count}`);
    }
    const perRoute = (pick: (c: RouteCounts) => number) => {
      const sums = new Map<string, number>();
      for (const c of routes) sums.set(c.route, (sums.get(c.route) ?? 0) + pick(c));
      return sums;
    };
    family('sdc_http_received_bytes_total', 'counter', 'Request bytes read from clients (request line, headers and body), by route');
    for (const [route, n] of perRoute((c) => c.bytesIn)) lines.push(`sdc_http_received_bytes_total{route="${label(route)}"} ${n}`);
    family('sdc_http_sent_bytes_total', 'counter', 'Response bytes written to clients (headers and body), by route');
    for (const [route, n] of perRoute((c) => c.bytesOut)) lines.push(`sdc_http_sent_bytes_total{route="${label(route)}"} ${n}`);
    // Counted by the service where bytes are written or promoted, so every backend counts (a PUT
    // to S3 never reaches this server; its promotion does).
    const activity = ctx.activity;
    family('sdc_uploads_stored_total', 'counter', 'Files stored: PUT to a signed local address, staged S3 upload promoted, upload in parts completed');
    lines.push(`sdc_uploads_stored_total ${activity?.stored ?? 0}`);
    family('sdc_records_indexed_total', 'counter', 'Records this process created (upload, notification, sweep, reconcile, a download that found a file unindexed)');
    lines.push(`sdc_records_indexed_total ${activity?.indexed ?? 0}`);
    const backlog = ingestBacklog(ctx);
    family('sdc_ingest_backlog_uploads', 'gauge', 'Uploads the store acknowledged that are not indexed yet, as the last sweep saw them');
    lines.push(`sdc_ingest_backlog_uploads ${backlog.uploads}`);
    family('sdc_ingest_backlog_oldest_seconds', 'gauge', 'Age of the oldest upload not indexed yet, as the last sweep saw it');
    lines.push(`sdc_ingest_backlog_oldest_seconds ${backlog.oldest_seconds}`);
    family('sdc_upload_conflicts_total', 'counter', 'Uploads refused because the file exists (409)');
    lines.push(`sdc_upload_conflicts_total ${events.conflicts}`);
    family('sdc_signature_failures_total', 'counter', 'Signed store addresses refused: bad or expired signature (403)');
    lines.push(`sdc_signature_failures_total ${events.signatureFailures}`);
    family('sdc_api_key_failures_total', 'counter', 'Requests refused for their API key: missing (401) or wrong/revoked (403)');
    lines.push(`sdc_api_key_failures_total{reason="missing"} ${events.keyMissing}`, `sdc_api_key_failures_total{reason="refused"} ${events.keyRefused}`);
    return `${lines.join('\n')}\n`;
  };

  app.get('/metrics', { config: { access: 'read' } }, async (_request, reply) =>
    reply.type(registry.contentType).send(`${httpText()}\n${await registry.metrics()}`),
  );
}

export default fp(metricsPlugin, { name: 'sdc-metrics' });
