import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CpuTracker, reapedChildrenMs } from '../../../bench/lib/process-cpu.js';

// The campaign bench's CPU per process (bench/lib/process-cpu.ts, docs/performance.md "Searches
// beside a campaign") must keep the CPU of processes that end inside the window (a pool's
// PostgreSQL backends, the uploaders) and count only the window's part of the others.

/** Burns this much CPU (process.cpuUsage: an amount of work, not a wait). */
function burn(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

/** A child that burns `ms` of CPU, says so, and ends when its stdin closes. */
const BURNER = `const s = process.cpuUsage(); for (;;) { const u = process.cpuUsage(s); if ((u.user + u.system) / 1000 >= ${300}) break; }
process.stdout.write('burnt\\n'); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;

describe.skipIf(process.platform !== 'linux')('CPU per process from /proc (bench/lib/process-cpu.ts)', () => {
  it('keeps what a process that ended inside the window used, up to its last sample, and what its parent reaped', async () => {
    const child = spawn(process.execPath, ['-e', BURNER], { stdio: ['pipe', 'pipe', 'inherit'] });
    const tracker = new CpuTracker((p) => (p.pid === child.pid ? 'child' : undefined), 60_000);
    await once(child.stdout, 'data');
    tracker.sample();
    child.stdin.end();
    await once(child, 'exit');
    const used = tracker.stop();
    // Spawned just before the first snapshot, it burnt its 300 ms after it; gone at the last one.
    const counted = used.byLabel.get('child') ?? 0;
    expect(counted).toBeGreaterThanOrEqual(250);
    // Ended and waited for: its whole CPU is in this process's reaped children's (cutime/cstime).
    expect(reapedChildrenMs(used.first, used.last, process.pid)).toBeGreaterThanOrEqual(counted);
  });

  it('counts a process that was running before the window for its time within it only', () => {
    burn(300);
    const tracker = new CpuTracker((p) => (p.pid === process.pid ? 'me' : undefined), 60_000);
    burn(200);
    const used = tracker.stop();
    const mine = used.byLabel.get('me') ?? 0;
    const total = (process.cpuUsage().user + process.cpuUsage().system) / 1000;
    expect(mine).toBeGreaterThanOrEqual(150);
    expect(mine).toBeLessThan(total - 250);
  });
});
