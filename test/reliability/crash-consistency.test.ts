import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { reconcile } from '../../src/service/index.js';
import { LocalObjectStore, UrlSigner } from '../../src/store/index.js';
import { startChildServer, waitForLog, type ChildServer } from '../helpers/child-server.js';
import { recordFigures, scale } from './figures.js';
import { bytesOf, sha256, slowPut, uploadAddress } from './upload-client.js';

const CRASHES = scale(2, 10);
const UPLOADS_PER_CRASH = scale(24, 60);

interface Planned {
  readonly path: string;
  readonly bytes: Buffer;
}

/** Every file under the store, temporary ones included, relative to it. */
async function storeFiles(home: string): Promise<string[]> {
  const dir = join(home, 'store');
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

function plan(round: number, count: number): Planned[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `imap_swe_l1a_crash${round}n${i}_20240105_20240105_v00-01.cdf`;
    // 64 KiB to ~1.5 MiB: long enough in flight that the kill lands mid-upload.
    return { path: `imap/swe/l1a/2024/01/${name}`, bytes: bytesOf(name, 65_536 + ((i * 97_357) % 1_500_000)) };
  });
}

describe('crash consistency: SIGKILL in the middle of PUTs', () => {
  let home: string;
  let server: ChildServer | undefined;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-crash-'));
  });
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await rm(home, { recursive: true, force: true });
  });

  it(`loses no acknowledged upload and shows no partial file (${CRASHES} crashes)`, { timeout: scale(120_000, 900_000) }, async () => {
    const env = { SDC_RATE_LIMIT: '0' };
    const acknowledged = new Map<string, Buffer>();
    const all = new Map<string, Buffer>();
    let inFlightAtKill = 0;
    let tempFilesRemovedAtRestart = 0;
    let indexedAtRestart = 0;
    /** Stored or downloaded bytes that are not exactly a file's planned bytes. */
    let partialFilesSeen = 0;
    let tempFilesSeen = 0;

    for (let round = 0; round < CRASHES; round++) {
      server = await startChildServer(home, env);
      const files = plan(round, UPLOADS_PER_CRASH);
      const addresses = await Promise.all(files.map((f) => uploadAddress(server!.url, f.path)));
      let acked = 0;
      let settled = 0;
      const killed = new Promise<void>((resolve) => {
        files.forEach((f, i) => {
          all.set(f.path, f.bytes);
          void slowPut(addresses[i]!, f.bytes, 64 * 1024, 2).then((status) => {
            settled++;
            if (status === 200) {
              acknowledged.set(f.path, f.bytes);
              acked++;
            }
            // Kill once about a third have been acknowledged: the rest are mid-flight.
            if (acked === Math.ceil(UPLOADS_PER_CRASH / 3) && status === 200) {
              inFlightAtKill += UPLOADS_PER_CRASH - settled;
              server!.process.kill('SIGKILL');
              resolve();
            }
          });
        });
      });
      await killed;
      expect(await server.exited).toBe('SIGKILL');

      // Restart on the same SDC_HOME: it removes temporary files and indexes what was stored.
      server = await startChildServer(home, env);
      // The repair runs in the background once the server listens: its report says when it is done.
      indexedAtRestart += ((await waitForLog(server, 'indexed objects that had no record')).indexed as number | undefined) ?? 0;
      const removed = server.logs.map((l) => JSON.parse(l) as { msg: string; removed?: number; indexed?: number });
      tempFilesRemovedAtRestart += removed.find((l) => l.msg.startsWith('removed temporary files'))?.removed ?? 0;

      // No temporary file remains; every stored file is whole (its exact planned bytes).
      const stored = await storeFiles(home);
      tempFilesSeen += stored.filter((f) => f.includes('/.upload-')).length;
      for (const file of stored) {
        if (!all.has(file) || sha256(await readFile(join(home, 'store', file))) !== sha256(all.get(file)!)) partialFilesSeen++;
      }

      // Every acknowledged upload has its record and downloads whole.
      // Should the restarted server die on its own, say how, so a failure below can be read.
      let stopping = false;
      const alive = server;
      void alive.exited.then((how) => {
        if (!stopping) console.error(`restarted sdc serve ended (${how}) by itself: ${alive.stderr()}\n${alive.logs.slice(-5).join('\n')}`);
      });
      const records = new Map(
        ((await (await fetch(`${server.url}/query`)).json()) as { file_path: string; sha256: string; size: number }[]).map((r) => [r.file_path, r]),
      );
      for (const [path, bytes] of acknowledged) {
        expect(records.get(path), path).toMatchObject({ sha256: sha256(bytes), size: bytes.length });
      }
      // Files never acknowledged: absent (404), or whole; never partial.
      for (const [path, bytes] of all) {
        const res = await fetch(`${server.url}/download/${path}`);
        if (acknowledged.has(path)) expect(res.status, path).toBe(200);
        else expect([200, 404], path).toContain(res.status);
        if (res.status === 200 && sha256(Buffer.from(await res.arrayBuffer())) !== sha256(bytes)) partialFilesSeen++;
        if (res.status !== 200) await res.arrayBuffer();
      }
      stopping = true;
      server.process.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      server = undefined;
    }

    // A reconcile after the restarts finds nothing to repair.
    const catalog = await openSqliteCatalog(join(home, 'catalog.db'));
    try {
      const store = new LocalObjectStore(join(home, 'store'), new UrlSigner(Buffer.from('unused')), () => 'http://unused');
      const report = await reconcile({ mission: IMAP_MISSION, catalog, store, uploadTtl: 60, downloadTtl: 60, log: pino({ level: 'silent' }) });
      expect(report).toEqual({ indexed: 0, skipped: 0, missing: [], refused: 0, deferred: 0, refusedLinks: 0 });
    } finally {
      await catalog.close();
    }
    const storedAtEnd = await storeFiles(home);
    const acknowledgedLost = [...acknowledged.keys()].filter((p) => !storedAtEnd.includes(p)).length;
    expect({ partialFilesSeen, tempFilesSeen, acknowledgedLost }).toEqual({ partialFilesSeen: 0, tempFilesSeen: 0, acknowledgedLost: 0 });
    recordFigures('crash', {
      crashes: CRASHES,
      uploadsStarted: all.size,
      acknowledged: acknowledged.size,
      inFlightAtKill,
      acknowledgedLost,
      partialFilesSeen,
      tempFilesSeenAfterRestart: tempFilesSeen,
      tempFilesRemovedAtRestart,
      indexedAtRestart,
      storedAtEnd: storedAtEnd.length,
    });
  });
});
