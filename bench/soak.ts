import { readdirSync, readFileSync } from 'node:fs';
import { FaultWorld, type Instance } from '../test/faults/fault-world.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL } from '../test/helpers/backends.js';
import { percentile, table } from './lib/stats.js';

/**
 * The soak (docs/reliability.md, "Soak"): two `sdc serve` on Ceph RGW + PostgreSQL, each reached
 * through the fault suite's TCP proxies (test/faults/fault-world.ts), under a mixed load for a
 * while: uploads, queries, downloads (302, then the bytes), a harvester polling /changes and an
 * SSE listener on /events, with a fault from the suite's repertoire every `faultEverySeconds`.
 * Reported: each process's RSS and open descriptors over time, answers by status, acknowledged
 * uploads not findable at the end, and p99 per route per 5-minute window.
 */
export interface SoakOptions {
  readonly seconds: number;
  readonly faultEverySeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const WINDOW_MS = 5 * 60_000;

/** Resident memory (MiB) and open descriptors of a live process, from /proc (Linux). */
function usageOf(pid: number): { rssMiB: number; fds: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rssMiB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

export async function benchSoak(options: SoakOptions): Promise<string> {
  if (!HAVE_PRODUCTION_BACKENDS) return `not measured: ${PRODUCTION_BACKENDS_LABEL}.`;
  const world = await FaultWorld.start();
  const started = Date.now();
  const until = started + options.seconds * 1000;
  const running = () => Date.now() < until;
  /** Latencies (ms) per window and route. */
  const latencies = new Map<number, Map<string, number[]>>();
  const noAnswer = new Map<string, number>();
  let eventsHeard = 0;
  let changesHarvested = 0;
  const faults: string[] = [];
  const samples: { at: number; instance: string; pid: number; rssMiB: number; fds: number }[] = [];

  const pick = (n: number): Instance => world.instances[n % 2]!;
  /** A timed request through the world (answers noted there, by status). */
  const timed = async (route: string, instance: Instance, path: string, init?: RequestInit): Promise<Response | undefined> => {
    const t0 = Date.now();
    const res = await world.ask(instance, path, init);
    if (res === undefined) noAnswer.set(route, (noAnswer.get(route) ?? 0) + 1);
    else {
      const window = Math.floor((t0 - started) / WINDOW_MS);
      const byRoute = latencies.get(window) ?? new Map<string, number[]>();
      latencies.set(window, byRoute);
      const list = byRoute.get(route) ?? [];
      byRoute.set(route, list);
      list.push(Date.now() - t0);
    }
    return res;
  };

  const uploaders = Array.from({ length: 2 }, async () => {
    while (running()) await world.upload();
  });
  const queries = (async () => {
    for (let n = 0; running(); n++) await (await timed('GET /query', pick(n), `/query?instrument=swe&limit=50`))?.arrayBuffer();
  })();
  const downloads = (async () => {
    for (let n = 0; running(); n++) {
      const paths = [...world.acknowledged];
      if (paths.length === 0) {
        await sleep(200);
        continue;
      }
      const res = await timed('GET /download', pick(n), `/download/${paths[n % paths.length]}`, { redirect: 'manual' });
      await res?.arrayBuffer();
      const location = res?.status === 302 ? res.headers.get('location') : null;
      if (location) await fetch(location, { signal: AbortSignal.timeout(20_000) }).then((r) => r.arrayBuffer()).catch(() => undefined);
    }
  })();
  const harvester = (async () => {
    let after = 0;
    for (let n = 0; running(); n++) {
      const res = await timed('GET /changes', pick(n), `/changes?after=${after}&limit=500`);
      if (res?.status === 200) {
        const entries = (await res.json()) as { id: number }[];
        changesHarvested += entries.length;
        after = entries.at(-1)?.id ?? after;
      } else await res?.arrayBuffer();
      await sleep(1000);
    }
  })();
  const listener = (async () => {
    for (let n = 0; running(); n++) {
      try {
        const res = await fetch(`${pick(n).url}/events`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(Math.max(1000, until - Date.now())) });
        for await (const chunk of res.body ?? []) eventsHeard += (Buffer.from(chunk as Uint8Array).toString('utf8').match(/^data:/gm) ?? []).length;
      } catch {
        // The instance died or the run ended: listen again (to the other one).
      }
      await sleep(500);
    }
  })();
  const repertoire: [string, () => Promise<void>][] = [
    ['catalog connections cut', async () => world.pgProxy.cut()],
    ['catalog refused 3 s', async () => {
      await world.pgProxy.refuse();
      await sleep(3000);
      await world.pgProxy.resume();
    }],
    ['store refused 3 s', async () => {
      await world.s3Proxy.refuse();
      await sleep(3000);
      await world.s3Proxy.resume();
    }],
    ['instance A SIGKILLed, restarted', async () => {
      await world.a.kill('SIGKILL');
      await world.a.start();
    }],
    ['PostgreSQL backends terminated', async () => void (await world.terminateBackends())],
    ['catalog black-holed 3 s', async () => {
      world.pgProxy.blackhole();
      await sleep(3000);
      await world.pgProxy.resume();
    }],
    ['instance B SIGKILLed, restarted', async () => {
      await world.b.kill('SIGKILL');
      await world.b.start();
    }],
  ];
  const injector = (async () => {
    for (let n = 0; ; n++) {
      const next = started + (n + 1) * options.faultEverySeconds * 1000;
      if (next >= until) return;
      await sleep(next - Date.now());
      const [name, fault] = repertoire[n % repertoire.length]!;
      faults.push(`${Math.round((Date.now() - started) / 1000)} s: ${name}`);
      await fault();
    }
  })();
  const sampler = (async () => {
    const every = Math.max(5000, Math.round((options.seconds * 1000) / 24));
    while (running()) {
      for (const instance of world.instances) {
        const pid = instance.alive ? instance.process?.pid : undefined;
        const usage = pid === undefined ? undefined : usageOf(pid);
        if (pid !== undefined && usage) samples.push({ at: Date.now() - started, instance: instance.name, pid, ...usage });
      }
      await sleep(Math.min(every, Math.max(0, until - Date.now())));
    }
  })();

  const report = (lost: readonly string[]): string => {
      const byStatus = new Map<number, number>();
      for (const a of world.answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
      const no503RetryAfter = world.answers.filter((a) => a.status === 503 && !a.retryAfter).length;
      const over500 = world.answers.filter((a) => a.status >= 500 && a.status !== 503).length;
      const lines = [
        `${options.seconds} s of mixed load, a fault every ${options.faultEverySeconds} s; two instances on Ceph RGW + PostgreSQL through the fault proxies.`,
        '',
        table(
          ['figure', 'value'],
          [
            ['uploads acknowledged by the store', String(world.acknowledged.size)],
            ['acknowledged uploads not findable 30 s after the end', String(lost.length)],
            ['answers by status', [...byStatus].sort((x, y) => x[0] - y[0]).map(([s, k]) => `${s}×${k}`).join(' ')],
            ['5xx other than 503 / 503 without Retry-After', `${over500} / ${no503RetryAfter}`],
            ['requests without an answer (instance down, by route)', [...noAnswer].map(([r, k]) => `${r} ${k}`).join(', ') || '0'],
            ['change-log entries harvested / SSE events heard', `${changesHarvested} / ${eventsHeard}`],
            ['processes that ended by themselves', String(world.instances.flatMap((i) => i.unexpectedExits).length)],
            ['faults', faults.join('; ') || 'none'],
          ],
        ),
        '',
        'p99 latency per route per 5-minute window (ms; requests answered):',
        '',
        table(
          ['window', 'route', 'requests', 'p50', 'p99'],
          [...latencies].flatMap(([window, byRoute]) =>
            [...byRoute].map(([route, list]) => {
              const sorted = [...list].sort((x, y) => x - y);
              return [`${window * 5}–${window * 5 + 5} min`, route, String(list.length), String(percentile(sorted, 50)), String(percentile(sorted, 99))];
            }),
          ),
        ),
        '',
        'RSS and open file descriptors per process (a restart is a new pid, starting again):',
        '',
        table(
          ['s', 'instance', 'pid', 'RSS MiB', 'fds'],
          samples.map((s) => [String(Math.round(s.at / 1000)), s.instance, String(s.pid), s.rssMiB.toFixed(0), String(s.fds)]),
        ),
      ];
      return lines.join('\n');
  };

  try {
    await Promise.all([...uploaders, queries, downloads, harvester, listener, injector, sampler]);
    return report(await world.unfindable(30_000));
  } finally {
    await world.stop();
  }
}
