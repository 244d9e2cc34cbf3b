import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { get } from 'node:http';
import { startMinimalPeer, startSdc, type ChildServer } from './lib/child-server.js';
import { seededHome } from './lib/seeded-home.js';
import { cpuSeconds, median } from './lib/interleave.js';
import { fmt } from './lib/stats.js';

const ROOT = join(import.meta.dirname, '..');

/**
 * Streams a query that matches every one of N records, counting records and sampling the
 * server's memory and CPU, in alternation with the yardstick (bench/minimal-peer.mjs on the
 * same catalog: each row as an object through JSON.stringify, the least code, which builds the
 * whole answer before sending it); with `beforeDist`, another build (e.g. main's) streams the
 * same records too, for a ratio taken in the same run.
 */
export async function benchLargeAnswer(count: number, beforeDist?: string, rounds = 2): Promise<string> {
  const home = seededHome(join(ROOT, 'dist'), count);
  const beforeHome = beforeDist ? seededHome(beforeDist, count) : undefined;
  const servers: [string, ChildServer][] = [['now', await startSdc({ SDC_HOME: home, SDC_LOG_LEVEL: 'warn' })]];
  const withPeer = count <= PEER_UP_TO;
  if (withPeer) servers.push(['peer', await startMinimalPeer(home)]);
  if (beforeDist && beforeHome) servers.push(['before', await startSdc({ SDC_HOME: beforeHome, SDC_LOG_LEVEL: 'warn' }, beforeDist)]);
  try {
    const lines: string[] = [];
    const rates: Record<string, number[]> = { now: [], peer: [], before: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, server] of servers) {
        const rssBefore = server.rssMiB();
        let rssPeak = rssBefore;
        const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, server.rssMiB())), 100);
        const cpu0 = cpuSeconds(server.pid);
        const t0 = performance.now();
        const { records, bytes } = await countRecords(`${server.url}/query`);
        const seconds = (performance.now() - t0) / 1000;
        const cpu = cpuSeconds(server.pid) - cpu0;
        clearInterval(sampler);
        rates[name]!.push(records / seconds);
        lines.push(
          `- ${NAMES[name]} (round ${round + 1}): ${records.toLocaleString('en')} records, ${fmt(bytes / 2 ** 20, 0)} MiB in ${fmt(seconds, 1)} s = ` +
            `**${fmt(records / seconds, 0)} records/s**; server CPU ${fmt(cpu, 1)} s = ${fmt(records / cpu, 0)} records per CPU second; ` +
            `RSS ${fmt(rssBefore, 0)} MiB before, peak ${fmt(rssPeak, 0)} MiB.`,
        );
      }
    }
    const against = (other: string) => fmt(median(rates.now!.map((r, i) => r / rates[other]![i]!)));
    const ratios = [
      withPeer ? `Records/s, this build ÷ the yardstick (median of rounds): **${against('peer')}**.` : `No yardstick above ${PEER_UP_TO.toLocaleString('en')} records (its answer would pass V8's longest string).`,
      beforeDist ? `This build ÷ before: ${against('before')}.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return [`GET /query matching all ${count.toLocaleString('en')} records, read by a node:http client that only counts records. ${ratios}`, '', ...lines].join('\n');
  } finally {
    for (const [, server] of servers) await server.stop();
    rmSync(home, { recursive: true, force: true });
    if (beforeHome) rmSync(beforeHome, { recursive: true, force: true });
  }
}

/**
 * Largest answer the yardstick is run for: it builds the whole answer as one string (~345 MiB a
 * million records), and V8 refuses strings past ~512 MiB.
 */
const PEER_UP_TO = 1_000_000;

const NAMES: Record<string, string> = { now: 'this build', peer: 'yardstick (minimal peer, whole answer built in memory)', before: 'before' };

const MARK = Buffer.from('{"file_path":');

/** Reads an answer with node:http (light on the client's CPU) and counts the records in it. */
function countRecords(url: string): Promise<{ records: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let records = 0;
      let bytes = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        // A mark may straddle two chunks: search the previous chunk's last bytes too.
        const data = Buffer.concat([tail, chunk]);
        for (let at = data.indexOf(MARK); at >= 0; at = data.indexOf(MARK, at + MARK.length)) records++;
        tail = data.subarray(Math.max(0, data.length - MARK.length + 1));
        // Marks entirely inside the kept tail were counted already; the tail is too short to hold one.
      });
      res.on('end', () => resolve({ records, bytes }));
      res.on('error', reject);
    }).on('error', reject);
  });
}
