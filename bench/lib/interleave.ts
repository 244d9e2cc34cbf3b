import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * The measuring method of issue 15 for a noisy, shared 2-core machine: servers pinned to one
 * core, the load generator (this process) to the other, each server loaded in turn (A B C A B C,
 * the order rotated each round), every run preceded by a warm-up so that no server is measured
 * cold, and the median over rounds of each ratio taken within a round. Besides requests per
 * second, each run reads the server's CPU time from /proc: CPU microseconds per request are
 * much less sensitive to other load on the machine than throughput.
 */

/** Where taskset exists and there are two cores: [load generator core, server core]. */
export function pinning(): { readonly loadCore: number; readonly serverCore: number } | undefined {
  if (cpus().length < 2) return undefined;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return { loadCore: 0, serverCore: 1 };
}

/** Pins this process (the load generator) to its core; a no-op without taskset. */
export function pinSelf(): void {
  const pin = pinning();
  if (pin) execFileSync('taskset', ['-a', '-pc', String(pin.loadCore), String(process.pid)], { stdio: 'ignore' });
}

/** The command that starts a server on the server core: [file, ...args]. */
export function onServerCore(command: string, args: readonly string[]): [string, string[]] {
  const pin = pinning();
  return pin ? ['taskset', ['-c', String(pin.serverCore), command, ...args]] : [command, [...args]];
}

/** User + system CPU seconds a process has used so far (Linux /proc; 100 ticks a second). */
export function cpuSeconds(pid: number): number {
  const fields = statFields(`/proc/${pid}/stat`);
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** User + system CPU seconds of this process's children that have ended and been waited for (Linux). */
export function endedChildrenCpuSeconds(): number {
  const fields = statFields('/proc/self/stat');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** The fields of a /proc stat file after the command's name (the state is the first). */
function statFields(file: string): string[] {
  const stat = readFileSync(file, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

export interface Target {
  readonly name: string;
  readonly pid: number;
  /** The absolute URL to load for a case, or undefined when this target does not serve it. */
  url(caseName: string): string | undefined;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Sample {
  readonly rps: number;
  /** Server CPU microseconds per answered request. */
  readonly cpuUs: number;
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
}

export async function loadOnce(url: string, seconds: number, headers: Readonly<Record<string, string>> = {}, pid?: number): Promise<Sample> {
  const cpu0 = pid === undefined ? 0 : cpuSeconds(pid);
  const r = await autocannon({ url, connections: 16, duration: seconds, headers: { ...headers } });
  const cpu = pid === undefined ? NaN : cpuSeconds(pid) - cpu0;
  const answered = r.requests.total;
  // 3xx (download's redirect) count as answers; anything else that is not 2xx is reported.
  const non2xx = r.non2xx - (r['3xx'] ?? 0);
  return { rps: r.requests.average, cpuUs: (cpu * 1e6) / Math.max(1, answered), p99: r.latency.p99, non2xx, errors: r.errors + r.timeouts };
}

export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** samples[case][target][round] */
export type Samples = Record<string, Record<string, Sample[]>>;

/** Rounds of every case over every target, interleaved; a short warm-up precedes each run. */
export async function interleaved(
  targets: readonly Target[],
  cases: readonly string[],
  { rounds, seconds, warmup = 1 }: { rounds: number; seconds: number; warmup?: number },
): Promise<Samples> {
  const samples: Samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const name of cases) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) {
        const url = target.url(name);
        if (url === undefined) continue;
        await loadOnce(url, warmup, target.headers);
        const sample = await loadOnce(url, seconds, target.headers, target.pid);
        ((samples[name] ??= {})[target.name] ??= []).push(sample);
      }
    }
  }
  return samples;
}

/** Median over rounds of a/b, each ratio taken within its round. */
export function ratio(samples: Record<string, Sample[]>, a: string, b: string, of: (s: Sample) => number = (s) => s.rps): number {
  const x = samples[a] ?? [];
  const y = samples[b] ?? [];
  return median(x.map((s, i) => (y[i] ? of(s) / of(y[i]!) : NaN)));
}
