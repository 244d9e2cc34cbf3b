import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { syntheticRecords } from '../../src/catalog/synthetic-records.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';

/** Records in the archive: an answer of about 103 MiB as JSON, 60 MiB as CSV. */
const RECORDS = 300_000;
/**
 * The server's V8 heap (old space) is capped below the size of every answer, so a server that
 * held an answer whole would run out of memory and die; one that streams does not notice.
 */
const HEAP_CAP_MIB = 56;
/**
 * And its resident memory (which also counts Buffers, outside the V8 heap) may grow by less
 * than the answer while it sends it: garbage the collector has not yet returned is slack.
 */
const growthAllowed = (answerBytes: number) => answerBytes;

async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/**
 * Reads an answer slowly (pausing after each chunk), sampling the server's RSS meanwhile;
 * resolves with the bytes received and the highest RSS seen.
 */
function readSlowly(url: string, pid: number): Promise<{ bytes: number; peak: number }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let peak = 0;
    let sampling = false;
    const sample = () => {
      if (sampling) return;
      sampling = true;
      void residentBytes(pid)
        .then((rss) => (peak = Math.max(peak, rss)))
        .finally(() => (sampling = false));
    };
    const timer = setInterval(sample, 20);
    request(url, (res) => {
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.pause();
        setTimeout(() => res.resume(), 1);
      });
      res.on('end', () => {
        clearInterval(timer);
        void residentBytes(pid).then((rss) => resolve({ bytes, peak: Math.max(peak, rss) }));
      });
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe.skipIf(process.platform !== 'linux')('streaming answers hold memory flat (reads /proc)', () => {
  let home: string;
  let server: ChildServer;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-stream-mem-'));
    const catalog = await openCatalog(`sqlite:${join(home, 'catalog.db')}`);
    // The bulk path (sdc seed's): a record at a time through insertMany took minutes on loaded cores.
    await catalog.bulkLoad(syntheticRecords(IMAP_MISSION, RECORDS));
    await catalog.close();
    server = await startChildServer(home, { SDC_LOG_LEVEL: 'info', SDC_RATE_LIMIT: '0', NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MIB}` });
  }, 300_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await rm(home, { recursive: true, force: true });
  });

  for (const format of ['json', 'ndjson', 'csv']) {
    it(`sends every record of a ${RECORDS}-record answer as ${format} without holding it`, async () => {
      const pid = server.process.pid!;
      // Warm up the route, so what is measured is the answer, not the first request's setup.
      await fetch(`${server.url}/query?instrument=swe&format=${format}`).then((r) => r.arrayBuffer());
      const before = await residentBytes(pid);
      const { bytes, peak } = await readSlowly(`${server.url}/query?format=${format}`, pid);
      expect(bytes, 'the answer is larger than the heap the server may use').toBeGreaterThan(HEAP_CAP_MIB * 2 ** 20);
      expect(server.process.exitCode, `the server died: ${server.stderr().slice(-300)}`).toBeNull();
      expect(peak - before, `RSS ${Math.round(before / 2 ** 20)} MiB -> peak ${Math.round(peak / 2 ** 20)} MiB for a ${Math.round(bytes / 2 ** 20)} MiB answer`).toBeLessThan(
        growthAllowed(bytes),
      );
    }, 120_000);
  }
});
