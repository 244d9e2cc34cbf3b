import { cpus, freemem, totalmem } from 'node:os';
import { execFileSync } from 'node:child_process';

/** What the figures were measured on. */
export function describeMachine(): string {
  const cpu = cpus();
  let load = '';
  try {
    load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  } catch {
    load = 'unknown';
  }
  return [
    `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}`,
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB memory (${(freemem() / 2 ** 30).toFixed(0)} GiB free)`,
    `Node ${process.version}, ${process.platform}/${process.arch}`,
    `load average at start: ${load}`,
  ].join('; ');
}
