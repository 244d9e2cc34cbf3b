import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../service/index.js';
import { ingestBacklog } from './dependency-checks.js';

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
 * The HTTP series of `GET /metrics` and the service's event counters. Per request the cost is one
 * synchronous onResponse hook (`count`) that adds to plain counters of its (method, route): no
 * label hashing, no histogram object, no timer of its own (Fastify's elapsed time is used). The
 * counters become Prometheus text only when scraped (`text`).
 */
export function requestCounts(ctx: ServiceContext) {
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

  const count = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
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
  };

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
  return { count, text: httpText };
}
