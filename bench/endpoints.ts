import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBareNode, startSdc } from './lib/child-server.js';
import { fmt, table } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');
const NEW_NAME = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v99-99.cdf';
const STORED = 'imap_mag_l2_norm_20240301_20240301_v00-01.cdf';

interface Run {
  readonly rps: number;
  readonly p99: number;
  readonly errors: number;
  readonly statuses: string;
}

async function load(url: string, seconds: number): Promise<Run> {
  const r = await autocannon({ url, connections: 16, duration: seconds });
  const codes = Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${(s as { count: number }).count}`)
    .join(' ');
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts, statuses: codes };
}

/**
 * Requests per second of three endpoints, each as a ratio of a bare node:http server
 * answering a small JSON string, measured in the same run (before and after, averaged).
 */
export async function benchEndpoints(seconds: number): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-endpoints-'));
  // A realistic catalog to query: 100k records over all instruments, levels and ten years.
  execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'seed', '--count', '100000', '--home', home, '--create'], { stdio: 'inherit' });
  const rows: string[][] = [];
  const bare = await startBareNode();
  const baseline1 = await load(bare.url, seconds);
  try {
    for (const level of ['info', 'warn']) {
      const sdc = await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: level });
      try {
        const up = await fetch(`${sdc.url}/upload/${STORED}`);
        if (up.status === 200) {
          await fetch((await up.json()) as string, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } });
        }
        const cases: [string, string][] = [
          ['GET /upload/{new name}', `/upload/${NEW_NAME}`],
          ['GET /download/{stored}', `/download/${STORED}`],
          ['GET /query (instrument+level+month)', '/query?instrument=swe&data_level=l1a&start_date=20240101&end_date=20240131'],
        ];
        for (const [label, path] of cases) {
          const run = await load(sdc.url + path, seconds);
          rows.push([label, level === 'info' ? 'info (request logs on)' : 'warn (request logs off)', fmt(run.rps, 0), fmt(run.p99, 1), String(run.errors), run.statuses]);
        }
      } finally {
        await sdc.stop();
      }
    }
    const baseline2 = await load(bare.url, seconds);
    const base = (baseline1.rps + baseline2.rps) / 2;
    const withRatio = rows.map((r) => [...r.slice(0, 3), fmt(Number(r[2]) / base), ...r.slice(3)]);
    return [
      `Bare node:http baseline: ${fmt(baseline1.rps, 0)} and ${fmt(baseline2.rps, 0)} req/s (before/after; mean ${fmt(base, 0)}).`,
      `autocannon, 16 connections, ${seconds} s per row, loopback; the server in its own process.`,
      '',
      table(['endpoint', 'log level', 'req/s', 'ratio to bare', 'p99 ms', 'errors', 'statuses'], withRatio),
    ].join('\n');
  } finally {
    await bare.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
