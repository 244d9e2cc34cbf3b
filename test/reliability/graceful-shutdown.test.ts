import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TEMP_PREFIX } from '../../src/store/local/write-primitives.js';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { bytesOf, sha256, slowPut, uploadAddress } from './upload-client.js';

const NAME = 'imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const PATH = `imap/mag/l1b/2024/03/${NAME}`;

async function storeFiles(home: string): Promise<string[]> {
  const entries = await readdir(join(home, 'store'), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

/** Resolves once the server is writing an upload's body (the store's temporary file exists). */
const uploadUnderWay = (home: string) =>
  vi.waitFor(async () => expect((await storeFiles(home)).some((name) => name.startsWith(TEMP_PREFIX))).toBe(true), { timeout: 20_000, interval: 20 });

describe('graceful shutdown on SIGTERM', () => {
  let home: string;
  let server: ChildServer | undefined;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-shutdown-'));
  });
  afterEach(async () => {
    server?.process.kill('SIGKILL');
    server = undefined;
    await rm(home, { recursive: true, force: true });
  });

  it('finishes an upload in flight, stores it whole with its record, refuses new connections, exits 0', async () => {
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0' });
    const bytes = bytesOf(NAME, 1024 * 1024);
    const address = await uploadAddress(server.url, PATH);
    const upload = slowPut(address, bytes, 64 * 1024, 40);
    // Once the upload is under way (the server writing its first chunks), ask the server to stop.
    await uploadUnderWay(home);
    server.process.kill('SIGTERM');
    expect(await upload).toBe(200);
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.url}/query`)).rejects.toThrow();

    expect(sha256(await readFile(join(home, 'store', PATH)))).toBe(sha256(bytes));
    const catalog = await openSqliteCatalog(join(home, 'catalog.db'));
    try {
      expect(await catalog.get(PATH)).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    } finally {
      await catalog.close();
    }
    expect(server.logs.some((l) => l.includes('"shutting down"'))).toBe(true);
  });

  it('after the grace period, cuts an upload that stalls and leaves no file of it', async () => {
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0', SDC_SHUTDOWN_GRACE: '1' });
    const address = await uploadAddress(server.url, PATH);
    // Sends 3 of 16 chunks, then stalls for ever.
    const upload = slowPut(address, bytesOf(NAME, 1024 * 1024), 64 * 1024, 20, 3);
    await uploadUnderWay(home);
    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(await upload).toBe('failed');
    expect(await storeFiles(home)).toEqual([]);
  });
});
