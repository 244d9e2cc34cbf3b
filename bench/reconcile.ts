import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { syntheticRecords } from '../src/catalog/index.js';
import { IMAP_MISSION } from '../src/mission/index.js';
import { DIGESTS_IN_FLIGHT } from '../src/service/reconcile.js';
import { endedChildrenCpuSeconds, median } from './lib/interleave.js';
import { fmt, table } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');

/** Files with the mission's names written straight into a local store, with no record: what a lost catalog leaves. */
function unindexedStore(files: number, bytes: number): string {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-reconcile-'));
  const body = Buffer.alloc(bytes, 7);
  let i = 0;
  for (const record of syntheticRecords(IMAP_MISSION, files)) {
    const file = join(home, 'store', record.file_path);
    mkdirSync(dirname(file), { recursive: true });
    body.writeUInt32LE(i++, 0); // no two files alike
    writeFileSync(file, body);
  }
  return home;
}

interface Rate {
  /** Files per second, wall clock. */
  readonly wall: number;
  /** Files per CPU second. */
  readonly cpu: number;
}

/**
 * The yardstick: the least code that does the work reconcile cannot avoid, in this process: list
 * the store's files and read and hash each (SHA-256), as many at once as reconcile, with no
 * catalog, no name check and no log.
 */
async function listAndHash(home: string, atOnce: number): Promise<Rate> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const files = readdirSync(join(home, 'store'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(files[next++]!)) hash.update(chunk as Buffer);
      hash.digest('hex');
    }
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
  const cpu = process.cpuUsage(cpu0);
  return { wall: files.length / ((performance.now() - started) / 1000), cpu: files.length / ((cpu.user + cpu.system) / 1e6) };
}

/** `sdc reconcile` of a build, on a new catalog, as an operator runs it (the per-record log lines at info). */
function sdcReconcile(dist: string, home: string, files: number): Rate {
  for (const name of ['catalog.db', 'catalog.db-wal', 'catalog.db-shm']) rmSync(join(home, name), { force: true });
  const started = performance.now();
  const cpu0 = endedChildrenCpuSeconds();
  const run = spawnSync(process.execPath, [join(dist, 'cli/main.js'), 'reconcile', '--home', home, '--create'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, SDC_LOG_LEVEL: 'info' },
  });
  if (run.status !== 0) throw new Error(`sdc reconcile exited with ${run.status}: ${run.stderr.toString().slice(-500)}`);
  const seconds = (performance.now() - started) / 1000;
  const cpu = endedChildrenCpuSeconds() - cpu0;
  // A run that indexed less than every file did not do the work it is timed for.
  const db = new Database(join(home, 'catalog.db'), { readonly: true });
  const indexed = db.prepare('SELECT count(*) FROM files').pluck().get() as number;
  db.close();
  if (indexed !== files) throw new Error(`sdc reconcile (${dist}) indexed ${indexed} of ${files} files`);
  return { wall: files / seconds, cpu: files / cpu };
}

export interface ReconcileBenchOptions {
  readonly files: number;
  readonly bytes: number;
  readonly rounds: number;
  /** Another build's dist/ (e.g. main's), measured in the same rounds. */
  readonly beforeDist?: string;
}

/** Files read at once by the yardstick: as many as reconcile reads. */
const AT_ONCE = DIGESTS_IN_FLIGHT;

/**
 * `sdc reconcile` of a local store full of files without records, against listing and hashing
 * the same files with the least code (and against another build), interleaved round by round.
 */
export async function benchReconcile({ files, bytes, rounds, beforeDist }: ReconcileBenchOptions): Promise<string> {
  const home = unindexedStore(files, bytes);
  try {
    const runs: Record<string, () => Promise<Rate> | Rate> = {
      sdc: () => sdcReconcile(join(ROOT, 'dist'), home, files),
      'list and hash': () => listAndHash(home, AT_ONCE),
      ...(beforeDist ? { before: () => sdcReconcile(beforeDist, home, files) } : {}),
    };
    const names = Object.keys(runs);
    const samples: Record<string, Rate[]> = Object.fromEntries(names.map((n) => [n, []]));
    await listAndHash(home, AT_ONCE); // the files into the page cache, for every run alike
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!;
        samples[name]!.push(await runs[name]!());
      }
    }
    const ratio = (a: string, b: string, of: (r: Rate) => number) => median(samples[a]!.map((s, i) => of(s) / of(samples[b]![i]!)));
    const rows = names.map((name) => [
      name,
      fmt(median(samples[name]!.map((s) => s.wall)), 0),
      fmt(median(samples[name]!.map((s) => s.cpu)), 0),
      name === 'sdc' ? '' : `${fmt(ratio('sdc', name, (r) => r.wall))} / ${fmt(ratio('sdc', name, (r) => r.cpu))}`,
    ]);
    return [
      `${files.toLocaleString('en')} files of ${bytes.toLocaleString('en')} bytes in a local store, none with a record (files in the page cache); ${rounds} interleaved rounds, order rotated each round; medians, ratios taken within each round.`,
      `sdc = \`sdc reconcile --create\` of this build on a new SQLite catalog, the whole process (start-up, listing, names checked, each file read and hashed, ${AT_ONCE} at once, records inserted 1000 at a time, a log line each). list and hash = the yardstick: the same files listed and hashed with the least code in the bench's process, ${AT_ONCE} at once.`,
      '',
      table(['run', 'files/s', 'files per CPU second', 'sdc ÷ this (wall / CPU)'], rows),
    ].join('\n');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
