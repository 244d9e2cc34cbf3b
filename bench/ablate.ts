import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startSdc, type ChildServer } from './lib/child-server.js';
import { interleaved, median, pinSelf, ratio, type Target } from './lib/interleave.js';
import { fmt, table } from './lib/stats.js';

/**
 * Ablations in one run: the service under several environments (and builds), interleaved, as
 * CPU per request and req/s relative to the first. `--variant name=ENV=v,ENV2=v[@dist]`, repeated.
 * Example: npx tsx bench/ablate.ts --variant info=SDC_LOG_LEVEL=info --variant warn=SDC_LOG_LEVEL=warn
 */
const { values } = parseArgs({ options: { variant: { type: 'string', multiple: true }, rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '3' } } });
const ROOT = join(import.meta.dirname, '..');
const CASES: Record<string, string> = {
  upload: '/upload/imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v99-99.cdf',
  download: '/download/imap_mag_l2_norm_20240301_20240301_v00-01.cdf',
  query: '/query?instrument=swe&data_level=l1a&start_date=20220101&end_date=20220131',
};
pinSelf();
const home = mkdtempSync(join(tmpdir(), 'sdc-ablate-'));
execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'seed', '--count', '100000', '--home', home, '--create'], { stdio: 'inherit' });
const key = execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'keys', 'create', 'bench', '--home', home], { encoding: 'utf8' }).trim();
const servers: ChildServer[] = [];
try {
  const targets: Target[] = [];
  for (const spec of values.variant ?? []) {
    const [name, rest = ''] = spec.split(/=(.*)/s) as [string, string?];
    const [envText, dist] = rest.split('@') as [string, string?];
    const env = Object.fromEntries(envText.split(',').filter(Boolean).map((kv) => kv.split(/=(.*)/s).slice(0, 2) as [string, string]));
    const server = await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: 'info', SDC_RATE_LIMIT: '1000000', ...env }, dist);
    servers.push(server);
    if (targets.length === 0) {
      const up = await fetch(`${server.url}/upload/imap_mag_l2_norm_20240301_20240301_v00-01.cdf`, { headers: { 'x-api-key': key } });
      if (up.status === 200) await fetch((await up.json()) as string, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } });
    }
    targets.push({ name, pid: server.pid, url: (c) => server.url + CASES[c], headers: { 'x-api-key': key } });
  }
  const samples = await interleaved(targets, Object.keys(CASES), { rounds: Number(values.rounds), seconds: Number(values.seconds) });
  const first = targets[0]!.name;
  const rows = Object.keys(CASES).flatMap((c) =>
    targets.map((t) => [c, t.name, fmt(median(samples[c]![t.name]!.map((s) => s.rps)), 0), fmt(median(samples[c]![t.name]!.map((s) => s.cpuUs)), 1), fmt(ratio(samples[c]!, t.name, first)), fmt(ratio(samples[c]!, first, t.name, (s) => s.cpuUs))]),
  );
  console.log(table(['endpoint', 'variant', 'req/s', 'CPU µs/req', `req/s vs ${first}`, `CPU gain vs ${first}`], rows));
} finally {
  for (const s of servers) await s.stop();
  rmSync(home, { recursive: true, force: true });
}
