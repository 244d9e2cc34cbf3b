import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time per process from Linux's /proc, for "where does the CPU go per file" (docs/performance.md,
 * "A reprocessing campaign"): a snapshot holds every process's user+system ticks, its command
 * name, its parent and its command line; two snapshots give each process's CPU over a window.
 * A process that ended inside the window is missing from the second snapshot; its time is seen
 * only through its parent's reaped-children fields (cutime/cstime), as the bench's uploaders are.
 */
export interface ProcessSample {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  readonly cmdline: string;
  /** utime + stime, in ticks. */
  readonly ticks: number;
  /** cutime + cstime: the children it waited for, in ticks. */
  readonly childTicks: number;
}

export interface CpuSnapshot {
  readonly at: number;
  readonly processes: ReadonlyMap<number, ProcessSample>;
  /** The machine's busy ticks over all cores (/proc/stat: all but idle and iowait). */
  readonly machineBusy: number;
}

/** Linux's USER_HZ: /proc reports CPU in hundredths of a second on every architecture Node runs on. */
const TICK_MS = 10;

function readStat(pid: number): ProcessSample | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    // f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14-17.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(f[1]), comm, cmdline, ticks: Number(f[11]) + Number(f[12]), childTicks: Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined; // ended between the listing and the read
  }
}

export function cpuSnapshot(): CpuSnapshot {
  const processes = new Map<number, ProcessSample>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const sample = readStat(Number(name));
    if (sample) processes.set(sample.pid, sample);
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const machineBusy = cpu.reduce((s, n) => s + n, 0) - cpu[3]! - cpu[4]!;
  return { at: performance.now(), processes, machineBusy };
}

/** Whether the process was started with this environment variable (its /proc environ, fixed at exec). */
export function startedWith(pid: number, variable: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(variable);
  } catch {
    return false;
  }
}

/**
 * CPU milliseconds per label between two snapshots. `label` names a process (or undefined: not
 * counted); a process in both snapshots counts its difference, one only in the second (started
 * inside the window) all its time. Also the machine's busy milliseconds, for what nothing labelled used.
 */
export function cpuByLabel(before: CpuSnapshot, after: CpuSnapshot, label: (p: ProcessSample) => string | undefined): { byLabel: Map<string, number>; machineMs: number; windowMs: number } {
  const byLabel = new Map<string, number>();
  for (const p of after.processes.values()) {
    const name = label(p);
    if (!name) continue;
    const earlier = before.processes.get(p.pid);
    const ticks = earlier && earlier.comm === p.comm ? p.ticks - earlier.ticks : p.ticks;
    byLabel.set(name, (byLabel.get(name) ?? 0) + ticks * TICK_MS);
  }
  return { byLabel, machineMs: (after.machineBusy - before.machineBusy) * TICK_MS, windowMs: after.at - before.at };
}

/** A process's reaped children's CPU between two snapshots, in milliseconds (0 if it is not in both). */
export function reapedChildrenMs(before: CpuSnapshot, after: CpuSnapshot, pid: number): number {
  const a = before.processes.get(pid);
  const b = after.processes.get(pid);
  return a && b ? (b.childTicks - a.childTicks) * TICK_MS : 0;
}

/**
 * Every process's CPU over a window, sampled each `everyMs` so that processes ending inside the
 * window (a pool's PostgreSQL backends come and go) keep what they used until their last sample:
 * at most one interval of each is lost. `label` is asked at each sample, so that a process
 * named later (a backend found by its connection's name) is counted from its first sample.
 */
export class CpuTracker {
  private readonly first: CpuSnapshot;
  private last: CpuSnapshot;
  private readonly seen = new Map<number, { comm: string; base: number; ticks: number; label: string }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly label: (p: ProcessSample) => string | undefined,
    everyMs = 1000,
  ) {
    this.first = this.last = cpuSnapshot();
    for (const p of this.first.processes.values()) this.note(p, true);
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private note(p: ProcessSample, atStart: boolean): void {
    const known = this.seen.get(p.pid);
    if (known && known.comm === p.comm) {
      known.ticks = p.ticks;
      return;
    }
    const name = this.label(p);
    // A process first seen after the start began inside the window: all its time counts.
    if (name) this.seen.set(p.pid, { comm: p.comm, base: atStart ? p.ticks : 0, ticks: p.ticks, label: name });
  }

  /** Takes a sample now (the timer takes one every `everyMs`). */
  sample(): void {
    this.last = cpuSnapshot();
    for (const p of this.last.processes.values()) this.note(p, false);
  }

  /** Stops sampling; CPU ms per label from the start to now, the machine's busy ms, and the two snapshots. */
  stop(): { byLabel: Map<string, number>; machineMs: number; windowMs: number; first: CpuSnapshot; last: CpuSnapshot } {
    clearInterval(this.timer);
    this.sample();
    const byLabel = new Map<string, number>();
    for (const p of this.seen.values()) byLabel.set(p.label, (byLabel.get(p.label) ?? 0) + (p.ticks - p.base) * TICK_MS);
    return { byLabel, machineMs: (this.last.machineBusy - this.first.machineBusy) * TICK_MS, windowMs: this.last.at - this.first.at, first: this.first, last: this.last };
  }
}
