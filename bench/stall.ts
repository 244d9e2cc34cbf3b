import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startSdc } from './lib/child-server.js';
import { seededHome } from './lib/seeded-home.js';
import { fmt, percentile, table } from './lib/stats.js';

/*
 * What users feel of one another's work on the embedded default (docs/performance.md,
 * "Stalls"): p99 of /healthz and of a selective /query while 4 clients run the heaviest
 * anonymous requests, ÷ the same p99 on the idle server; version=latest ÷ the same query
 * without it; /coverage of one instrument at N records ÷ at 10k. Every figure a ratio of
 * the same run.
 */

const ROOT = join(import.meta.dirname, '..');

/** The heaviest anonymous requests (issue 32): each client runs them in turn, reading every byte. */
const HEAVY = ['/query?version=latest&limit=10', '/coverage?version=latest', '/v0/query?version=latest', '/query?format=csv'];
const HEALTH = '/healthz';
/** 10-100 rows: one instrument and level over four weeks. */
const SELECTIVE = '/query?instrument=mag&data_level=l1a&start_date=20200201&end_date=20200228';
const LATEST = '/query?version=latest&instrument=mag&data_level=l1a&start_date=20200201&end_date=20200228&limit=10';
const PLAIN = '/query?instrument=mag&data_level=l1a&start_date=20200201&end_date=20200228&limit=10';
/** One instrument over one quarter: the same days at every size from 10k records up. */
const COVERAGE = '/coverage?instrument=mag&start_date=20200101&end_date=20200331';
const COVERAGE_ALL = '/coverage?instrument=mag';

async function timed(url: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return performance.now() - t;
}

/** Latencies (ms) of `paths` asked one after another, in turn, for `seconds`. */
async function probe(base: string, paths: readonly string[], seconds: number): Promise<Map<string, number[]>> {
  const out = new Map(paths.map((p) => [p, [] as number[]]));
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) for (const p of paths) out.get(p)!.push(await timed(base + p));
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/** Four clients (curl, in processes of their own so that reading gigabytes costs the probe nothing) running HEAVY in turn. */
function heavyClients(base: string): { stop(): void; finished(): number } {
  const children: ChildProcess[] = [];
  let finished = 0;
  for (let c = 0; c < 4; c++) {
    const order = [...HEAVY.slice(c), ...HEAVY.slice(0, c)];
    const loop = `while true; do for p in ${order.map((p) => `'${p}'`).join(' ')}; do curl -s -o /dev/null --max-time 600 "${base}$p"; echo done; done; done`;
    const child = spawn('bash', ['-c', loop], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    child.stdout!.on('data', (d: Buffer) => (finished += d.toString().split('done').length - 1));
    children.push(child);
  }
  return {
    stop: () => children.forEach((c) => c.pid && process.kill(-c.pid, 'SIGKILL')),
    finished: () => finished,
  };
}

export async function benchStalls(n: number, seconds = 20): Promise<string> {
  const dist = join(ROOT, 'dist');
  const small = seededHome(dist, 10_000);
  const large = seededHome(dist, n);
  const lines: string[] = [];
  const server = await startSdc({ SDC_HOME: large });
  let smallServer: Awaited<ReturnType<typeof startSdc>> | undefined;
  try {
    // Warm-up, then the idle figures.
    await probe(server.url, [HEALTH, SELECTIVE, LATEST, PLAIN, COVERAGE], 3);
    const idle = await probe(server.url, [HEALTH, SELECTIVE], seconds);
    const clients = heavyClients(server.url);
    let loaded: Map<string, number[]>;
    try {
      await new Promise((r) => setTimeout(r, 2000)); // every client inside a heavy request
      loaded = await probe(server.url, [HEALTH, SELECTIVE], seconds);
    } finally {
      clients.stop();
    }
    const heavyDone = clients.finished();
    await new Promise((r) => setTimeout(r, 2000)); // the server done with what the clients left
    const rows = [HEALTH, SELECTIVE].map((p) => {
      const a = idle.get(p)!;
      const b = loaded.get(p)!;
      return [p, String(a.length), fmt(percentile(a, 50)), fmt(percentile(a, 99)), String(b.length), fmt(percentile(b, 50)), fmt(percentile(b, 99)), `**${fmt(percentile(b, 99) / percentile(a, 99))}**`];
    });
    lines.push(
      `N = ${n.toLocaleString('en')} records (SQLite, sdc seed). Each path asked one request after another for ${seconds} s, idle and then while 4 clients (curl) ran ${HEAVY.map((h) => `\`${h}\``).join(', ')} in turn (${heavyDone} of them finished during the loaded probe).`,
      '',
      table(['request', 'idle n', 'idle p50 ms', 'idle p99 ms', 'loaded n', 'loaded p50 ms', 'loaded p99 ms', 'loaded p99 ÷ idle p99'], rows),
    );
    // version=latest against the same query without it, idle, interleaved.
    const pair = await probe(server.url, [LATEST, PLAIN, COVERAGE, COVERAGE_ALL], seconds);
    const latest = percentile(pair.get(LATEST)!, 50);
    const plain = percentile(pair.get(PLAIN)!, 50);
    smallServer = await startSdc({ SDC_HOME: small });
    await probe(smallServer.url, [COVERAGE, COVERAGE_ALL], 3);
    const smallPair = await probe(smallServer.url, [COVERAGE, COVERAGE_ALL], seconds);
    const cov = (m: Map<string, number[]>, p: string) => percentile(m.get(p)!, 50);
    lines.push(
      '',
      table(
        ['figure', 'ms (p50)', 'against', 'ms (p50)', 'ratio'],
        [
          [`\`${LATEST}\` at N`, fmt(latest), 'without version=latest', fmt(plain), `**${fmt(latest / plain)}**`],
          [`\`${COVERAGE}\` at N`, fmt(cov(pair, COVERAGE)), 'at 10,000 records', fmt(cov(smallPair, COVERAGE)), `**${fmt(cov(pair, COVERAGE) / cov(smallPair, COVERAGE))}**`],
          [`\`${COVERAGE_ALL}\` at N (ten years at N, 119 days at 10k)`, fmt(cov(pair, COVERAGE_ALL)), 'at 10,000 records', fmt(cov(smallPair, COVERAGE_ALL)), fmt(cov(pair, COVERAGE_ALL) / cov(smallPair, COVERAGE_ALL))],
        ],
      ),
    );
  } finally {
    await server.stop();
    await smallServer?.stop();
  }
  return lines.join('\n');
}
