import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { reconcile } from '../../src/service/index.js';
import { LocalObjectStore, UrlSigner } from '../../src/store/index.js';
import { startChildServer, waitForLog, type ChildServer } from '../helpers/child-server.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface WireRecord {
  file_path: string;
  uploader?: string;
  ingestion_date: string;
  sha256: string;
  size: number;
}

/**
 * Issue 28, item 8: what a signed address carried (the uploader) and when the bytes became the
 * file are kept with the bytes before they are visible, so neither a crash between storing and
 * indexing nor a catalog rebuilt from the store loses them; and a client retrying its own
 * address with its own bytes is answered 200, not 409 (docs/reliability.md).
 */
describe('a crash between storing the bytes and writing their record keeps the uploader (local store, SQLite)', () => {
  let home: string;
  let server: ChildServer | undefined;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-crash-uploader-'));
  });
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await rm(home, { recursive: true, force: true });
  });

  it('SIGKILL during PUTs while the catalog is write-locked: after restart each record has its uploader; a retry of its own address is 200, other bytes 409', { timeout: 180_000 }, async () => {
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0' });
    // Generated uploaders (names of several shapes) and sizes, one upload each.
    const cases = Array.from({ length: 4 }, (_, i) => ({
      uploader: `${['pipeline', 'team', 'ops', 'lab'][i]}-${randomBytes(3).toString('hex')}`,
      bytes: randomBytes(1 + Math.floor(Math.random() * 200_000)),
      path: `imap/swe/l1a/2024/03/imap_swe_l1a_crash${i}_20240301_20240301_v00-01.cdf`,
    }));
    const addresses: string[] = [];
    {
      const catalog = await openCatalog(`sqlite:${join(home, 'catalog.db')}`);
      const keys = await Promise.all(cases.map((c) => catalog.keys().create(c.uploader)));
      await catalog.close();
      for (const [i, c] of cases.entries()) {
        const res = await fetch(`${server.url}/upload/${c.path}`, { headers: { 'X-API-Key': keys[i]!.key } });
        expect(res.status).toBe(200);
        addresses.push((await res.json()) as string);
      }
    }

    // Another process holds the catalog's write lock: the PUTs store their bytes, then wait to write their records.
    const locker = new Database(join(home, 'catalog.db'));
    locker.exec('BEGIN IMMEDIATE');
    const puts = cases.map((c, i) => fetch(addresses[i]!, { method: 'PUT', body: c.bytes, headers: { 'Content-Type': '' } }).catch(() => undefined));
    // Each PUT's bytes stay under their key until its record write gives up (busy_timeout): the
    // kill comes once some are there; those are the crashes between storing and indexing.
    const isStored = (c: (typeof cases)[number]) => existsSync(join(home, 'store', ...c.path.split('/')));
    for (let waited = 0; !cases.some(isStored) && waited < 30_000; waited += 10) await sleep(10);
    await sleep(100);
    server.process.kill('SIGKILL');
    await server.exited;
    const crashed = cases.filter(isStored);
    expect(crashed.length, 'uploads whose bytes were stored when the process died').toBeGreaterThan(0);
    await Promise.all(puts);
    locker.exec('ROLLBACK');
    locker.close();

    // The restart indexes them in the background, each with the uploader its address carried.
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0' });
    await waitForLog(server, 'indexed objects that had no record');
    for (const c of crashed) {
      const name = c.path.slice(c.path.lastIndexOf('/') + 1);
      const records = (await (await fetch(`${server.url}/query?file_path=${name}`)).json()) as WireRecord[];
      expect(records, c.path).toMatchObject([{ file_path: c.path, uploader: c.uploader, sha256: sha256(c.bytes), size: c.bytes.length }]);
    }

    // The client, which never heard an answer, retries its own address with its own bytes: 200
    // (stored by the first try, or stored now by this one).
    // (The restarted server listens on another port: the address's path and signature are what count.)
    const atRestarted = (address: string) => `${server!.url}${new URL(address).pathname}${new URL(address).search}`;
    for (const [i, c] of cases.entries()) {
      const retry = await fetch(atRestarted(addresses[i]!), { method: 'PUT', body: c.bytes, headers: { 'Content-Type': '' } });
      expect(retry.status, c.path).toBe(200);
      // The same address with other bytes is another file: refused.
      const other = await fetch(atRestarted(addresses[i]!), { method: 'PUT', body: Buffer.concat([c.bytes, Buffer.from('x')]), headers: { 'Content-Type': '' } });
      expect(other.status, c.path).toBe(409);
    }
  });

  it('a catalog rebuilt from the store brings back every ingestion date and uploader exactly', { timeout: 60_000 }, async () => {
    expect(server).toBeDefined();
    const before = (await (await fetch(`${server!.url}/query`)).json()) as WireRecord[];
    expect(before.length).toBeGreaterThan(0);
    // A fresh, empty catalog over the same store, filled by reconcile alone.
    const rebuilt = await openCatalog(`sqlite:${join(home, 'rebuilt.db')}`);
    try {
      const store = new LocalObjectStore(join(home, 'store'), new UrlSigner(Buffer.from('unused')), () => 'http://unused');
      const ctx = { mission: IMAP_MISSION, catalog: rebuilt, store, uploadTtl: 60, downloadTtl: 60, log: pino({ level: 'silent' }) };
      const report = await reconcile(ctx);
      expect(report.indexed).toBe(before.length);
      for (const record of before) {
        expect(await rebuilt.get(record.file_path), record.file_path).toMatchObject({
          ingestion_date: record.ingestion_date,
          uploader: record.uploader,
          sha256: record.sha256,
          size: record.size,
        });
      }
    } finally {
      await rebuilt.close();
    }
  });
});
