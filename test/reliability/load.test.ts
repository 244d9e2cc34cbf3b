import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { recordFigures, scale } from './figures.js';
import { bytesOf, uploadAddress } from './upload-client.js';

/** Bounded in time and in count; loopback only. */
const SECONDS = scale(3, 60);
const MAX_REQUESTS = scale(100_000, 5_000_000);
const CONNECTIONS = 10;
const UPLOADERS = 4;
const SEEDED = 200;
const INSTRUMENTS = ['swe', 'mag', 'hit', 'codice'];

const seededPath = (i: number) => {
  const name = `imap_${INSTRUMENTS[i % 4]}_l1a_seed${i}_20240105_20240105_v00-01.cdf`;
  return `imap/${INSTRUMENTS[i % 4]}/l1a/2024/01/${name}`;
};

/** One sample of the server's own memory, from its /metrics. */
async function memory(url: string): Promise<{ rss: number; heapUsed: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((l) => l.startsWith(`${name} `)) ?? '')?.[2] ?? NaN);
  return { rss: value('sdc_process_resident_memory_bytes'), heapUsed: value('sdc_nodejs_heap_size_used_bytes') };
}

async function put(url: string, path: string, bytes: Buffer): Promise<number> {
  const res = await fetch(await uploadAddress(url, path), { method: 'PUT', body: bytes, headers: { 'Content-Type': '' } });
  await res.arrayBuffer();
  return res.status;
}

describe('load: query, upload-address and download requests, with uploads in parallel', () => {
  let home: string;
  let server: ChildServer;
  beforeAll(async () => {
    // Seeding is a few hundred uploads, each fsynced twice and committed.
    home = await mkdtemp(join(tmpdir(), 'sdc-load-'));
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0' });
    for (let i = 0; i < SEEDED; i++) expect(await put(server.url, seededPath(i), bytesOf(`seed${i}`, 4096))).toBe(200);
  }, 120_000);
  afterAll(async () => {
    server.process.kill('SIGTERM');
    await server.exited;
    await rm(home, { recursive: true, force: true });
  });

  it(`serves ${SECONDS} s of mixed load with 0 errors and no 5xx`, { timeout: (SECONDS + 60) * 1000 }, async () => {
    const before = await memory(server.url);
    let n = 0;
    const mixed: autocannon.Request = {
      method: 'GET',
      setupRequest: (request) => {
        const i = n++;
        const kind = i % 4;
        if (kind === 0) return { ...request, path: `/query?instrument=${INSTRUMENTS[i % 4]}&data_level=l1a` };
        if (kind === 1) return { ...request, path: `/query?file_path=${seededPath(i % SEEDED)}` };
        if (kind === 2) return { ...request, path: `/download/${seededPath(i % SEEDED)}` };
        return { ...request, path: `/upload/imap/glows/l1b/2025/02/imap_glows_l1b_addr${i}_20250201_20250201_v00-01.cdf` };
      },
    };

    // Real uploads (address + PUT of 64 KiB) run beside the load for its whole length.
    let uploads = 0;
    let uploadFailures = 0;
    let running = true;
    const uploaders = Array.from({ length: UPLOADERS }, async (_, w) => {
      for (let i = 0; running; i++) {
        const path = `imap/idex/l2/2025/03/imap_idex_l2_w${w}n${i}_20250301_20250301_v00-01.cdf`;
        const status = await put(server.url, path, bytesOf(path, 64 * 1024)).catch(() => 0);
        if (status === 200) uploads++;
        else uploadFailures++;
      }
    });

    // The server's memory under load, sampled through the run: two samples alone mostly show when V8 last collected.
    const samples: { rss: number; heapUsed: number }[] = [];
    const sampler = (async () => {
      while (running) {
        await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 30));
        if (running) samples.push(await memory(server.url));
      }
    })();

    const result = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      maxOverallRequests: MAX_REQUESTS,
      requests: [mixed],
    });
    running = false;
    await Promise.all([...uploaders, sampler]);
    const after = await memory(server.url);
    samples.push(after);
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    const medianHeap = (part: typeof samples) => part.map((s) => s.heapUsed).sort((a, b) => a - b)[Math.floor(part.length / 2)]!;
    const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

    const figures = {
      seconds: SECONDS,
      connections: CONNECTIONS,
      requests: result.requests.total,
      requestsPerSecond: Math.round(result.requests.average),
      p99Ms: result.latency.p99,
      errors: result.errors,
      timeouts: result.timeouts,
      status2xx: result['2xx'],
      status3xx: result['3xx'],
      status4xx: result['4xx'],
      status5xx: result['5xx'],
      uploads,
      uploadFailures,
      rssStartMiB: Math.round(before.rss / 2 ** 20),
      rssEndMiB: Math.round(after.rss / 2 ** 20),
      heapStartMiB: mib(before.heapUsed),
      heapEndMiB: mib(after.heapUsed),
      memorySamples: samples.length,
      heapMedianFirstQuarterMiB: mib(medianHeap(samples.slice(0, quarter))),
      heapMedianLastQuarterMiB: mib(medianHeap(samples.slice(-quarter))),
      heapMinMiB: mib(Math.min(...samples.map((s) => s.heapUsed))),
      heapMaxMiB: mib(Math.max(...samples.map((s) => s.heapUsed))),
    };
    recordFigures('load', figures);
    // Correctness only: no timing is asserted (the figures go to docs/reliability.md).
    expect(result.requests.total).toBeGreaterThan(0);
    expect({ errors: result.errors, timeouts: result.timeouts, status4xx: result['4xx'], status5xx: result['5xx'], uploadFailures }).toEqual({
      errors: 0,
      timeouts: 0,
      status4xx: 0,
      status5xx: 0,
      uploadFailures: 0,
    });
    expect(uploads).toBeGreaterThan(0);
    expect(samples.every((s) => s.heapUsed > 0 && s.rss > 0)).toBe(true);
  });
});
