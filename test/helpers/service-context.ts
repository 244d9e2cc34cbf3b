import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { ingest, type ServiceContext } from '../../src/service/index.js';
import { LocalObjectStore, UrlSigner } from '../../src/store/index.js';

export interface TestContext {
  readonly ctx: ServiceContext;
  readonly store: LocalObjectStore;
  readonly signer: UrlSigner;
  /** Stores bytes and indexes them, as a completed PUT does. */
  put(path: string, bytes: string): Promise<void>;
  dispose(): Promise<void>;
}

/** Service operations on the real embedded adapters (SQLite file, local folder) in a temp dir. */
export async function makeTestContext(): Promise<TestContext> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-svc-'));
  const signer = new UrlSigner(Buffer.from('test-secret'));
  const store = new LocalObjectStore(join(dir, 'store'), signer, () => 'http://files.test');
  const catalog = await openSqliteCatalog(join(dir, 'catalog.db'));
  const ctx: ServiceContext = { mission: IMAP_MISSION, catalog, store, uploadTtl: 3600, downloadTtl: 86400, log: pino({ level: 'silent' }) };
  return {
    ctx,
    store,
    signer,
    async put(path, bytes) {
      const result = await store.write(path, Readable.from([Buffer.from(bytes)]));
      if (result.status !== 'stored') throw new Error(`${path} exists`);
      await ingest(ctx, path, result);
    },
    async dispose() {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Collects a streamed query body. */
export async function collect<T>(body: unknown): Promise<T[]> {
  const out: T[] = [];
  for await (const item of body as AsyncIterable<T>) out.push(item);
  return out;
}
