import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { mkdir, open, readdir, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { isOutOfSpace, OutOfSpaceError } from '../../src/service/out-of-space.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordFigures } from '../reliability/figures.js';

/**
 * Small tmpfs mounts stand in for a full disk. Mounting needs root (CI runs as root);
 * anywhere else these tests are skipped, and say why.
 */
function probeMount(): string | undefined {
  if (process.platform !== 'linux') return 'disk-full tests need Linux tmpfs mounts';
  if (process.getuid?.() !== 0) return 'disk-full tests need root to mount a small tmpfs (CI runs as root)';
  const dir = mkdtempSync(join(tmpdir(), 'sdc-tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `disk-full tests skipped: mounting a tmpfs failed (${(err as Error).message.split('\n')[0]})`;
  } finally {
    rmdirSync(dir);
  }
}
const CANNOT_MOUNT = probeMount();

/** A fresh tmpfs of `size` (mount(8) syntax: 1m, 512k), and how to remove it. */
function smallDisk(size: string): { readonly dir: string; resize(size: string): void; unmount(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sdc-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return {
    dir,
    resize: (to) => execFileSync('mount', ['-o', `remount,size=${to}`, dir]),
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmdirSync(dir);
    },
  };
}

/** Writes a file until the disk refuses more (ENOSPC). */
async function fill(file: string): Promise<void> {
  const handle = await open(file, 'w');
  const block = Buffer.alloc(4096, 1);
  try {
    for (;;) await handle.write(block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await handle.close();
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const pathOf = (n: number) => `imap/swe/l1a/2024/01/imap_swe_l1a_full_20240105_20240105_v00-${String(n).padStart(2, '0')}.cdf`;

async function addressOf(server: TestServer, path: string): Promise<string> {
  const res = await fetch(`${server.url}/upload/${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as string;
}

const put = (address: string, body: Uint8Array | string) => fetch(address, { method: 'PUT', body, headers: { 'Content-Type': '' } });

async function recordsOf(server: TestServer, path: string): Promise<unknown[]> {
  const res = await fetch(`${server.url}/query?file_path=${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as unknown[];
}

describe.skipIf(CANNOT_MOUNT !== undefined)('disk full: a 507 with nothing half-done', () => {
  describe('the store on a disk too small for the bytes', () => {
    let disk: ReturnType<typeof smallDisk>;
    let server: TestServer;
    beforeAll(async () => {
      disk = smallDisk('1m');
      server = await startTestServer({ rateLimit: '0', minFree: '0', store: `file:${join(disk.dir, 'store')}` });
    });
    afterAll(async () => {
      try {
        await server?.stop();
      } finally {
        disk?.unmount();
      }
    });

    it('answers 507 saying the archive is out of space, keeps no temporary file, and takes the retry once there is room', async () => {
      const path = pathOf(1);
      const address = await addressOf(server, path);
      const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
      const refused = await put(address, bytes);
      expect(refused.status).toBe(507);
      expect(await refused.text()).toMatch(/archive is out of space/);
      expect(await filesUnder(disk.dir)).toEqual([]);
      const { blocks, bfree, bsize } = await statfs(disk.dir);
      expect((blocks - bfree) * bsize).toBeLessThan(64 * 1024);
      // Queries and downloads of what is there keep working.
      expect(await recordsOf(server, path)).toEqual([]);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // Room again: the same address now stores the file.
      disk.resize('8m');
      const retried = await put(address, bytes);
      expect(retried.status).toBe(200);
      expect(await recordsOf(server, path)).toHaveLength(1);
      expect((await stat(join(disk.dir, 'store', path))).size).toBe(bytes.length);
      recordFigures('diskFullStore', { status: refused.status, tempFilesLeft: 0, retryStatus: retried.status });
    });
  });

  describe('the catalog on a full disk while the bytes fit', () => {
    let disk: ReturnType<typeof smallDisk>;
    let server: TestServer;
    beforeAll(async () => {
      disk = smallDisk('4m');
      server = await startTestServer({ rateLimit: '0', catalog: `sqlite:${join(disk.dir, 'catalog.db')}` });
    });
    afterAll(async () => {
      try {
        await server?.stop();
      } finally {
        disk?.unmount();
      }
    });

    it('answers 507, removes the stored file again, keeps answering queries, and takes the retry once there is room', async () => {
      // One file in before the disk fills, so a query has something to find.
      const before = pathOf(2);
      expect((await put(await addressOf(server, before), 'stored before')).status).toBe(200);
      const path = pathOf(3);
      const address = await addressOf(server, path);
      const filler = join(disk.dir, 'filler');
      await fill(filler);

      const refused = await put(address, 'bytes that fit, a record that does not');
      expect(refused.status).toBe(507);
      expect(await refused.text()).toMatch(/archive is out of space/);
      // Neither the file nor its record, nor a temporary file.
      const store = join(server.home, 'store');
      expect((await filesUnder(store)).map((f) => f.slice(store.length + 1))).toEqual([before]);
      expect(await recordsOf(server, path)).toEqual([]);
      // Reads keep working while the disk is full.
      expect(await recordsOf(server, before)).toHaveLength(1);
      expect((await fetch(`${server.url}/download/${before}`, { redirect: 'manual' })).status).toBe(302);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

      // Room again: the client's retry of the same address is stored and indexed (no 409).
      await rm(filler);
      const retried = await put(address, 'bytes that fit, a record that does not');
      expect(retried.status).toBe(200);
      expect(await recordsOf(server, path)).toHaveLength(1);
      recordFigures('diskFullCatalog', { status: refused.status, filesWithoutRecord: 0, retryStatus: retried.status });
    });
  });

  describe('a download that cannot index on the spot, under an access policy', () => {
    let disk: ReturnType<typeof smallDisk>;
    let server: TestServer;
    let reader: string;
    beforeAll(async () => {
      disk = smallDisk('4m');
      // l1a is held for the team (docs/api.md "Who sees what"); anonymous callers cannot tell it exists.
      const mission = { ...IMAP_MISSION, access: { default: 'public', rules: [{ match: { data_level: ['l1a'] }, access: 'team' }], embargoedMetadata: 'hidden' } };
      await writeFile(join(disk.dir, 'mission.json'), JSON.stringify(mission));
      server = await startTestServer({ rateLimit: '0', catalog: `sqlite:${join(disk.dir, 'catalog.db')}`, missionConfig: join(disk.dir, 'mission.json') });
      reader = (await server.ctx.catalog.keys().create('reader', 'reader')).key;
    });
    afterAll(async () => {
      try {
        await server?.stop();
      } finally {
        disk?.unmount();
      }
    });

    it('serves the bytes of a name without a record only to those its record would let see them', async () => {
      // No room for a record (the catalog's disk full first, so that no background pass can
      // index them meanwhile), then bytes in the store without a record, placed there by hand
      // (the store is on another file system).
      await fill(join(disk.dir, 'filler'));
      const team = pathOf(4);
      const open = 'imap/swe/l2/2024/01/imap_swe_l2_full_20240105_20240105_v00-04.cdf';
      for (const path of [team, open]) {
        await mkdir(dirname(join(server.home, 'store', path)), { recursive: true });
        await writeFile(join(server.home, 'store', path), `bytes of ${path}`);
      }
      const absent = await fetch(`${server.url}/download/${pathOf(5)}`, { redirect: 'manual' });
      const hidden = await fetch(`${server.url}/download/${team}`, { redirect: 'manual' });
      expect(hidden.status).toBe(404);
      expect(await hidden.text()).toBe((await absent.text()).replace(pathOf(5), team));
      expect(await recordsOf(server, team)).toEqual([]);
      // A key holder gets the bytes, and so does anyone for a public file: served though not indexed.
      expect((await fetch(`${server.url}/download/${team}`, { redirect: 'manual', headers: { 'X-API-Key': reader } })).status).toBe(302);
      expect((await fetch(`${server.url}/download/${open}`, { redirect: 'manual' })).status).toBe(302);
      expect(await recordsOf(server, open)).toEqual([]);
      await rm(join(disk.dir, 'filler'));
    });
  });

  describe('the key store on a full disk', () => {
    let disk: ReturnType<typeof smallDisk>;
    let catalog: Catalog;
    beforeAll(async () => {
      disk = smallDisk('4m');
      catalog = await openCatalog(`sqlite:${join(disk.dir, 'catalog.db')}`);
    });
    afterAll(async () => {
      try {
        await catalog?.close();
      } finally {
        disk?.unmount();
      }
    });

    it('a rotation that does not fit fails as a full disk (507), the old key keeps working, and the retry with room rotates', async () => {
      const keys = catalog.keys();
      const { key: old } = await keys.create('swe-pipeline');
      const filler = join(disk.dir, 'filler');
      await fill(filler);

      const failure = await keys.rotate('swe-pipeline', 60).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isOutOfSpace(failure), `the error says the disk is full: ${String(failure)}`).toBe(true);
      // Nothing half-done: no new key, the old one without an end.
      expect(await keys.list()).toHaveLength(1);
      expect(await keys.check(old)).toMatchObject({ kind: 'valid' });

      await rm(filler);
      expect(await keys.rotate('swe-pipeline', 60)).toMatchObject({ kind: 'rotated' });
      recordFigures('diskFullKeys', { outOfSpace: 1, keysAfterFailure: 1 });
    });
  });
});

if (CANNOT_MOUNT !== undefined) {
  describe('disk full: a 507 with nothing half-done', () => {
    it.skip(CANNOT_MOUNT, () => undefined);
  });
}

describe('disk full is recognised from every backend', () => {
  it('ENOSPC and EDQUOT (file system), SQLITE_FULL (SQLite), 53100 (PostgreSQL), also as a cause', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']) expect(isOutOfSpace(coded(code))).toBe(true);
    expect(isOutOfSpace(new Error('wrapped', { cause: coded('ENOSPC') }))).toBe(true);
    for (const code of ['EACCES', 'SQLITE_BUSY', '23505']) expect(isOutOfSpace(coded(code))).toBe(false);
    expect(isOutOfSpace(undefined)).toBe(false);
    expect(new OutOfSpaceError('a/b.cdf')).toMatchObject({ statusCode: 507, message: expect.stringMatching(/archive is out of space/) as string });
  });
});
