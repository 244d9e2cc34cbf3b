import pg from 'pg';
import { CHANGE_LOG_LOCK } from '../../src/catalog/change-log.js';
import { percentile } from './stats.js';

/**
 * How long each transaction holds the change log's commit-order lock (src/catalog/change-log.ts),
 * seen from outside: pg_locks sampled as fast as one connection can, each holder being a
 * transaction (pg_locks' virtual transaction id: a backend's commits one after another are
 * told apart even when each holds for less than a sample); a hold is from its first to its last sample plus one
 * interval, so its resolution is the sampling interval (reported beside the figures). The lock
 * is one for the whole database: `applicationName` counts only the holders whose connections
 * carry it (the bench's own instances), not another deployment's or test's on the same server.
 *
 * It samples in bursts (BURST_MS of sampling, then PAUSE_MS of rest): sampling without pause
 * cost its PostgreSQL backend 8.4 ms of CPU a file, 16 % of a quiet campaign's two cores
 * (docs/performance.md, "Searches beside a campaign"), which the campaign then lacked. A hold
 * (~1 ms) is measured within one burst; `busy` is the share of samples, unbiased by the rests.
 */
const BURST_MS = 250;
const PAUSE_MS = 750;

export class LockSampler {
  private readonly holds = new Map<string, { first: number; last: number }>();
  private samples = 0;
  private busySamples = 0;
  private running = true;
  private done: Promise<void> = Promise.resolve();
  private sampling = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly applicationName: string,
  ) {}

  start(): void {
    this.done = (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      await client.connect();
      const sql = `SELECT l.pid, l.virtualtransaction AS xact FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $1
          AND a.application_name = $2`;
      try {
        for (let burst = 0; this.running; burst++) {
          const begun = performance.now();
          let now = begun;
          while (this.running && now - begun < BURST_MS) {
            const { rows } = await client.query<{ pid: number; xact: string }>(sql, [CHANGE_LOG_LOCK, this.applicationName]);
            now = performance.now();
            this.samples++;
            if (rows.length > 0) this.busySamples++;
            for (const { pid, xact } of rows) {
              // Keyed by burst too: a hold seen on both sides of a rest is two, not one spanning it.
              const key = `${burst} ${pid} ${xact}`;
              const hold = this.holds.get(key);
              if (hold) hold.last = now;
              else this.holds.set(key, { first: now, last: now });
            }
          }
          this.sampling += now - begun;
          if (this.running) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      } finally {
        await client.end();
      }
    })();
  }

  /**
   * Stops sampling: the holds seen (p50/p99; a hold shorter than one interval may be missed, so
   * these lean long), the share of samples in which the lock was held (`busy`: with the commits
   * per second that took it, the mean hold is busy ÷ commits/s), and the resolution.
   */
  async stop(): Promise<{ holders: number; intervalMs: number; p50Ms: number; p99Ms: number; meanMs: number; busy: number }> {
    this.running = false;
    await this.done;
    const intervalMs = this.sampling / Math.max(1, this.samples);
    const durations = [...this.holds.values()].map((h) => h.last - h.first + intervalMs).sort((a, b) => a - b);
    const meanMs = durations.reduce((a, b) => a + b, 0) / Math.max(1, durations.length);
    return { holders: durations.length, intervalMs, p50Ms: percentile(durations, 50), p99Ms: percentile(durations, 99), meanMs, busy: this.busySamples / Math.max(1, this.samples) };
  }
}
