import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startBareNode, startMinimalPeer, startSdc, type ChildServer } from './lib/child-server.js';
import { sdcCli, seededHome } from './lib/seeded-home.js';
import { interleaved, median, pinning, pinSelf, ratio, type Target } from './lib/interleave.js';
import { fmt, table } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');
const NEW_NAME = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v99-99.cdf';
const STORED = 'imap_mag_l2_norm_20240301_20240301_v00-01.cdf';
/** 31 records of the 100k seeded (one instrument and level, one month). */
const QUERY = '/query?instrument=swe&data_level=l1a&start_date=20220101&end_date=20220131';

const CASES: Record<string, string> = {
  'GET /upload/{new name}': `/upload/${NEW_NAME}`,
  'GET /download/{stored}': `/download/${STORED}`,
  'GET /query (instrument+level+month, 31 rows)': QUERY,
};

/** A catalog of 100k records and an API key, made by the build in `dist` (see seeded-home.ts); in `catalog` when given. */
function seededKeyedHome(dist: string, catalog?: string): { home: string; key: string } {
  const home = seededHome(dist, 100_000, catalog);
  const where = catalog === undefined ? [] : ['--catalog', catalog];
  return { home, key: sdcCli(dist, home, 'keys', 'create', 'bench', ...where).trim() };
}

/** A PostgreSQL URL naming a schema of its own (`?schema=`), for one build's catalog. */
function withSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.toString();
}

/** Drops the bench's schemas (the catalogs it seeded) from the database of `url`. */
async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  const u = new URL(url);
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Stores the file the download case asks for, through the server's own upload. */
async function storeDownloadTarget(server: ChildServer, key: string): Promise<void> {
  const up = await fetch(`${server.url}/upload/${STORED}`, { headers: { 'x-api-key': key } });
  if (up.status === 200) await fetch((await up.json()) as string, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } });
}

/** What both implementations answer, with the parts that differ by design masked (expiry, signature, port, uploader). */
async function answer(url: string, headers: Record<string, string>): Promise<string> {
  const r = await fetch(url, { headers, redirect: 'manual' });
  const body = (await r.text()).replace(/127\.0\.0\.1:\d+/g, 'HOST').replace(/expires=\d+/g, 'expires=E').replace(/&uploader=[^&]*/g, '').replace(/signature=[0-9a-f]{64}/g, 'signature=S');
  return `${r.status} ${r.headers.get('content-type')} ${body}`;
}

export interface EndpointOptions {
  readonly seconds: number;
  readonly rounds: number;
  /** Another build's dist/ (e.g. main's) measured in the same rounds, for before/after ratios. */
  readonly beforeDist?: string;
  /** Another version of bench/minimal-peer.mjs, run with --features beside peer+ in the same rounds (`peer+ before`). */
  readonly beforePeer?: string;
  /**
   * A PostgreSQL database: the catalogs (each build's and the peers') go to schemas of their own
   * there, dropped at the end, instead of SQLite files; the peers read it with pg.
   */
  readonly postgres?: string;
}

/**
 * Requests per second and server CPU per request of the three endpoints, as ratios to the
 * minimal implementation (bench/minimal-peer.mjs) and to a bare node:http answer, all measured
 * in the same rounds. The service runs with everything on: an API key exists and is sent on
 * uploads, metrics, rate limit (a budget it never reaches), request ids, CORS, access logs at info.
 */
export async function benchEndpoints({ seconds, rounds, beforeDist, beforePeer, postgres }: EndpointOptions): Promise<string> {
  pinSelf();
  const schemas = [`endpoints_${process.pid}`, `endpoints_${process.pid}_before`];
  const [catalog, beforeCatalog] = postgres === undefined ? [] : schemas.map((schema) => withSchema(postgres, schema));
  const { home, key } = seededKeyedHome(join(ROOT, 'dist'), catalog);
  const beforeHome = beforeDist ? seededKeyedHome(beforeDist, beforeCatalog) : undefined;
  const env = { SDC_LOG_LEVEL: 'info', SDC_RATE_LIMIT: '1000000' };
  const servers: ChildServer[] = [];
  try {
    const sdc = await startSdc({ ...env, SDC_HOME: home, ...(catalog ? { SDC_CATALOG: catalog } : {}) });
    servers.push(sdc);
    await storeDownloadTarget(sdc, key);
    const peer = await startMinimalPeer(home, false, {}, catalog);
    const featured = await startMinimalPeer(home, true, env, catalog);
    const bare = await startBareNode();
    servers.push(peer, featured, bare);
    const featuredBefore = beforePeer ? await startMinimalPeer(home, true, env, catalog, beforePeer) : undefined;
    if (featuredBefore) servers.push(featuredBefore);
    const before = beforeDist && beforeHome ? await startSdc({ ...env, SDC_HOME: beforeHome.home, ...(beforeCatalog ? { SDC_CATALOG: beforeCatalog } : {}) }, beforeDist) : undefined;
    if (before && beforeHome) {
      servers.push(before);
      await storeDownloadTarget(before, beforeHome.key);
    }

    const keyed = (name: string): Record<string, string> => (name.startsWith('GET /upload') ? { 'x-api-key': key } : {});
    const targets: Target[] = [
      { name: 'bare', pid: bare.pid, url: () => bare.url },
      { name: 'peer', pid: peer.pid, url: (c) => peer.url + CASES[c] },
      { name: 'peer+', pid: featured.pid, url: (c) => featured.url + CASES[c], headers: { 'x-api-key': key } },
      { name: 'sdc', pid: sdc.pid, url: (c) => sdc.url + CASES[c], headers: { 'x-api-key': key } },
      ...(featuredBefore ? [{ name: 'peer+ before', pid: featuredBefore.pid, url: (c: string) => featuredBefore.url + CASES[c], headers: { 'x-api-key': key } }] : []),
      ...(before ? [{ name: 'before', pid: before.pid, url: (c: string) => before.url + CASES[c], headers: { 'x-api-key': beforeHome!.key } }] : []),
    ];
    const same: string[] = [];
    for (const [name, path] of Object.entries(CASES)) {
      const [a, b, c] = [await answer(sdc.url + path, keyed(name)), await answer(peer.url + path, {}), await answer(featured.url + path, { 'x-api-key': key })];
      const differs = [b === a ? '' : `\n  peer: ${b.slice(0, 300)}`, c === a ? '' : `\n  peer+: ${c.slice(0, 300)}`].join('');
      same.push(`${name}: ${differs ? `DIFFERENT ANSWERS\n  sdc:  ${a.slice(0, 300)}${differs}` : 'same answer'}`);
    }
    const samples = await interleaved(targets, Object.keys(CASES), { rounds, seconds });
    const rows = Object.keys(CASES).map((name) => {
      const s = samples[name]!;
      const rps = (t: string) => fmt(median((s[t] ?? []).map((x) => x.rps)), 0);
      const cpu = (t: string) => fmt(median((s[t] ?? []).map((x) => x.cpuUs)), 0);
      const bad = (s.sdc ?? []).reduce((n, x) => n + x.non2xx + x.errors, 0);
      return [
        name,
        rps('sdc'),
        rps('peer'),
        rps('bare'),
        `**${fmt(ratio(s, 'sdc', 'peer'))}**`,
        fmt(ratio(s, 'sdc', 'bare')),
        fmt(ratio(s, 'peer', 'bare')),
        `${cpu('sdc')} / ${cpu('peer')} / ${cpu('bare')}`,
        fmt(ratio(s, 'peer', 'sdc', (x) => x.cpuUs)),
        `${cpu('peer+')}`,
        `**${fmt(ratio(s, 'peer+', 'sdc', (x) => x.cpuUs))}**`,
        fmt(ratio(s, 'peer', 'peer+', (x) => x.cpuUs)),
        ...(featuredBefore ? [cpu('peer+ before'), fmt(ratio(s, 'peer+ before', 'sdc', (x) => x.cpuUs)), ...(before ? [fmt(ratio(s, 'peer+ before', 'before', (x) => x.cpuUs))] : [])] : []),
        ...(before ? [cpu('before'), fmt(ratio(s, 'peer+', 'before', (x) => x.cpuUs)), fmt(ratio(s, 'sdc', 'before')), fmt(ratio(s, 'before', 'sdc', (x) => x.cpuUs))] : []),
        String(bad),
      ];
    });
    const pin = pinning();
    return [
      `Catalog: ${postgres === undefined ? 'SQLite' : 'PostgreSQL (a schema per build; the peers read it with pg named prepared statements)'}, 100k records.`,
      `${rounds} interleaved rounds (order rotated each round) of ${seconds} s per server and endpoint after a 1 s warm-up; figures are medians over rounds, ratios taken within each round.`,
      `autocannon, 16 connections, loopback; ${pin ? `load generator pinned to core ${pin.loadCore}, servers to core ${pin.serverCore} (taskset)` : 'no pinning (taskset or a second core missing)'}.`,
      'sdc = the service with everything on (an API key exists and uploads send it; metrics; rate limit with a budget never reached; request ids; CORS; access log at info).',
      'peer = bench/minimal-peer.mjs, the same work (the record columns each check decides on included) with no framework plugins; bare = node:http answering a constant string.',
      'peer+ = the same with --features: what sdc does on every request with everything on (the key\'s row, with its role, read and checked, rate-limit budget and headers, request id, CORS headers, metrics counters, access line to stdout every 20 ms), each in the least code; peer / peer+ is what those features cost, peer+ / sdc how close sdc is to the least code that has them.',
      'CPU µs/req: the server process\'s user+system CPU per answered request (from /proc), less sensitive to the machine\'s other load than req/s.',
      '',
      table(
        [
          'endpoint',
          'sdc req/s',
          'peer req/s',
          'bare req/s',
          'sdc / peer',
          'sdc / bare',
          'peer / bare',
          'CPU µs/req sdc / peer / bare',
          'peer / sdc CPU',
          'CPU µs/req peer+',
          'peer+ / sdc CPU',
          'peer / peer+ CPU',
          ...(featuredBefore ? ['CPU µs/req peer+ before', 'peer+ before / sdc CPU', ...(before ? ['peer+ before / before CPU'] : [])] : []),
          ...(before ? ['CPU µs/req before', 'peer+ / before CPU', 'sdc / before (req/s)', 'before / sdc CPU'] : []),
          'non-2xx/3xx or errors (sdc)',
        ],
        rows,
      ),
      '',
      `Same answers (status, type, body; expiry, signature, port and uploader masked): ${same.join('; ')}.`,
    ].join('\n');
  } finally {
    for (const s of servers) await s.stop();
    rmSync(home, { recursive: true, force: true });
    if (beforeHome) rmSync(beforeHome.home, { recursive: true, force: true });
    if (postgres !== undefined) await dropSchemas(postgres, schemas);
  }
}
