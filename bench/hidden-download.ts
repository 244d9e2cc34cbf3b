import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAP_MISSION } from '../src/mission/index.js';
import { startSdc } from './lib/child-server.js';
import { interleaved, median } from './lib/interleave.js';
import { sdcCli } from './lib/seeded-home.js';
import { fmt, table } from './lib/stats.js';

/*
 * Can a caller without a key tell a team file from a name never stored by how long /download
 * takes (docs/api.md "Who sees what", embargoedMetadata "hidden")? The two answers are equal
 * byte for byte (test/e2e/visibility-leaks.test.ts); their time is measured here, not in a test,
 * because a timed test fails on a loaded machine (it did in CI: 6.2 ms against 2.4 ms, where a
 * quiet machine gives 0.56 against 0.60). Interleaved rounds on one server, ratios per round.
 */

const TEAM = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
const ABSENT = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240107_20240107_v00-01.cdf';

export async function benchHiddenDownload({ rounds, seconds }: { rounds: number; seconds: number }): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-hidden-'));
  const missionFile = join(home, 'mission.json');
  const access = { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'hidden' };
  writeFileSync(missionFile, JSON.stringify({ ...IMAP_MISSION, access }));
  const env = { SDC_HOME: home, SDC_MISSION_CONFIG: missionFile, SDC_LOG_LEVEL: 'warn' };
  const server = await startSdc(env);
  try {
    const key = sdcCli(join(import.meta.dirname, '..', 'dist'), home, 'keys', 'create', 'bench', '--role', 'uploader').trim();
    const address = (await (await fetch(`${server.url}/upload/${TEAM}`, { headers: { 'X-API-Key': key } })).json()) as string;
    const put = await fetch(address, { method: 'PUT', body: 'team bytes', headers: { 'Content-Type': '' } });
    if (put.status !== 200) throw new Error(`the team file's PUT answered ${put.status}`);
    for (const path of [TEAM, ABSENT]) {
      const status = (await fetch(`${server.url}/download/${path}`, { redirect: 'manual' })).status;
      if (status !== 404) throw new Error(`/download/${path} without a key answered ${status}, not 404`);
    }
    const urls: Record<string, string> = { 'team file (hidden)': `${server.url}/download/${TEAM}`, 'name never stored': `${server.url}/download/${ABSENT}` };
    const samples = await interleaved([{ name: 'sdc', pid: server.pid, url: (c) => urls[c] }], Object.keys(urls), { rounds, seconds });
    const hidden = samples['team file (hidden)']!.sdc!;
    const absent = samples['name never stored']!.sdc!;
    const per = (of: (s: (typeof hidden)[number]) => number) => median(hidden.map((s, i) => of(s) / of(absent[i]!)));
    const rows = [
      ['requests/s', fmt(median(hidden.map((s) => s.rps)), 0), fmt(median(absent.map((s) => s.rps)), 0), fmt(per((s) => s.rps))],
      ['server CPU µs/request', fmt(median(hidden.map((s) => s.cpuUs)), 0), fmt(median(absent.map((s) => s.cpuUs)), 0), fmt(per((s) => s.cpuUs))],
      ['p99 ms', fmt(median(hidden.map((s) => s.p99)), 1), fmt(median(absent.map((s) => s.p99)), 1), fmt(per((s) => s.p99))],
    ];
    return [
      `Anonymous \`GET /download\` of a team file under \`embargoedMetadata: "hidden"\` against a name never stored (both 404, equal bodies), ${rounds} interleaved rounds of ${seconds} s, 16 connections, medians. Within noise means the ratio is near 1.`,
      '',
      table(['figure', 'team file (hidden)', 'name never stored', 'hidden ÷ absent'], rows),
    ].join('\n');
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
