import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startSdc } from './lib/child-server.js';
import { fmt, table } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');
const SDC = join(ROOT, 'dist', 'cli', 'main.js');
const MINIMAL = join(import.meta.dirname, 'minimal-transfer-client.mjs');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Wall time of a process to its end, ms; throws when it fails. */
function timed(args: readonly string[], env: Record<string, string> = {}): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr.toString().slice(-500)}`);
  return performance.now() - started;
}

/** Like `timed`, with `input` on stdin (the minimal client's file list). */
function timedAsync(args: readonly string[], env: Record<string, string>, input = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(input);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`))));
  });
}

/** `count` small files of one descriptor under a data directory; their local paths. */
function writeFiles(dataDir: string, descriptor: string, count: number): string[] {
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
    const file = join(dataDir, 'imap', 'swe', 'l1a', day.slice(0, 4), day.slice(4, 6), `imap_swe_l1a_${descriptor}_${day}_${day}_v00-01.cdf`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `file ${descriptor} ${i}\n`);
    files.push(file);
  }
  return files;
}

/**
 * Issue 31's client figures, each a ratio within one round: `sdc --version` and `sdc query`
 * against bare `node -e 0` (target: within 3x), and `sdc upload` / `sdc download --query` of
 * `files` small files with --jobs 8, as files/s over the minimal undici client doing the same
 * requests at the same concurrency (bench/minimal-transfer-client.mjs). The server runs
 * without a rate limit here: this measures the client, not the pacing (docs/client.md).
 */
export async function benchClient({ files = 800, rounds = 3 }: { files?: number; rounds?: number } = {}): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'sdc-bench-client-'));
  const startup: number[][] = [];
  const transfer: { up: number; down: number }[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const home = join(work, `home-${round}`);
      const server = await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: 'warn', SDC_RATE_LIMIT: '0' });
      try {
        const env = { IMAP_DATA_ACCESS_URL: server.url };
        const sdcDir = join(work, `sdc-${round}`);
        const minDir = join(work, `min-${round}`);
        writeFiles(sdcDir, 'sci', files);
        const minimalFiles = writeFiles(minDir, 'hk', files);
        const sdcUp = await timedAsync([SDC, 'upload', '--jobs', '8', '--quiet', '--data-dir', sdcDir, join(sdcDir, 'imap')], env);
        const minUp = await timedAsync([MINIMAL, 'upload', server.url, minDir, '8'], {}, minimalFiles.join('\n'));
        const sdcDown = await timedAsync([SDC, 'download', '--query', '--descriptor', 'sci', '--jobs', '8', '--quiet', '--data-dir', join(work, `sdc-down-${round}`)], env);
        const minDown = await timedAsync([MINIMAL, 'download', server.url, join(work, `min-down-${round}`), '8', 'descriptor=hk'], {});
        transfer.push({ up: minUp / sdcUp, down: minDown / sdcDown });
        // Start-up, interleaved: bare node, sdc --version, sdc query (one small page).
        for (let i = 0; i < 5; i++) {
          startup.push([
            timed(['-e', '0']),
            timed([SDC, '--version']),
            timed([SDC, 'query', '--limit', '10', '--output', 'json', '--quiet'], env),
          ]);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const bare = median(startup.map((r) => r[0]!));
  const ratio = (i: number) => median(startup.map((r) => r[i]! / r[0]!));
  return [
    table(
      ['start-up', 'median ms', 'ratio to `node -e 0` (median of same-round ratios; target <= 3)'],
      [
        ['`node -e 0`', fmt(bare, 0), '1'],
        ['`sdc --version`', fmt(median(startup.map((r) => r[1]!)), 0), fmt(ratio(1))],
        ['`sdc query --limit 10`', fmt(median(startup.map((r) => r[2]!)), 0), fmt(ratio(2))],
      ],
    ),
    '',
    table(
      [`${files} small files, --jobs 8`, 'files/s of sdc ÷ files/s of the minimal undici client (median of rounds)'],
      [
        ['`sdc upload`', fmt(median(transfer.map((t) => t.up)))],
        ['`sdc download --query`', fmt(median(transfer.map((t) => t.down)))],
      ],
    ),
    '',
    `${rounds} rounds; each ratio is taken within a round (both clients against the same server, no rate limit), and sdc's times include its process start-up, as the minimal client's do.`,
  ].join('\n');
}
