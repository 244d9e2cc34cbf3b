import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadServerConfig } from '../../src/config.js';
import { parseMinFree } from '../../src/store/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// docs/deploy.md "Free space": under the watermark (SDC_MIN_FREE) the local store refuses new
// uploads with 507 before the disk is full; /readyz and /metrics say so; reads go on.

/** A small tmpfs of its own when root may mount one (CI runs as root); else undefined. */
function smallDisk(): { readonly dir: string; unmount(): void } | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'sdc-space-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch {
    rmdirSync(dir);
    return undefined;
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir]);
      rmdirSync(dir);
    },
  };
}

const pathOf = (n: number) => `imap/swe/l1a/2024/01/imap_swe_l1a_space_20240105_20240105_v00-${String(n).padStart(2, '0')}.cdf`;
const put = (address: string, body: string) => fetch(address, { method: 'PUT', body, headers: { 'Content-Type': '' } });

interface Readiness {
  status: string;
  space?: { free_bytes: number; size_bytes: number; min_free_bytes: number; low: boolean };
}

/** /readyz until its space says `low` (the store looks at its disk at most once a second). */
async function readyWhen(server: TestServer, low: boolean): Promise<Readiness> {
  for (let i = 0; ; i++) {
    const body = (await (await fetch(`${server.url}/readyz`)).json()) as Readiness;
    if (body.space?.low === low || i === 100) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const metric = async (server: TestServer, name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);

describe('free space: the local store refuses new uploads under SDC_MIN_FREE', () => {
  const disk = smallDisk();
  let server: TestServer;
  let filler: string;
  beforeAll(async () => {
    // On a 4 MiB tmpfs, a 1 MiB watermark; without root, a watermark above any disk's free space.
    const store = disk ? `file:${join(disk.dir, 'store')}` : undefined;
    server = await startTestServer({ rateLimit: '0', minFree: disk ? '1MiB' : '100%', ...(store ? { store } : {}) });
    filler = join(disk?.dir ?? server.home, 'filler');
  });
  afterAll(async () => {
    try {
      await server?.stop();
    } finally {
      disk?.unmount();
    }
  });

  it.runIf(disk)('takes uploads while there is room, refuses them (507) under the watermark, takes them again once room is made', async () => {
    const first = await (await fetch(`${server.url}/upload/${pathOf(1)}`)).json() as string;
    expect((await put(first, 'stored with room')).status).toBe(200);
    const early = (await (await fetch(`${server.url}/upload/${pathOf(2)}`)).json()) as string;
    expect(await readyWhen(server, false)).toMatchObject({ status: 'ready', space: { low: false, min_free_bytes: 1024 ** 2 } });
    expect(await metric(server, 'sdc_store_low_space')).toBe(0);

    // Something else fills the disk to under 1 MiB free.
    await writeFile(filler, Buffer.alloc(3.3 * 1024 ** 2, 1));
    const ready = await readyWhen(server, true);
    expect(ready).toMatchObject({ status: 'degraded', space: { low: true } });
    expect(ready.space!.free_bytes).toBeLessThan(ready.space!.min_free_bytes);
    expect(await metric(server, 'sdc_store_low_space')).toBe(1);
    expect(await metric(server, 'sdc_store_free_bytes')).toBeLessThan(1024 ** 2);

    // A new address, an address handed out before, and an upload in parts: all refused, nothing kept.
    const refused = await fetch(`${server.url}/upload/${pathOf(3)}`);
    expect(refused.status).toBe(507);
    expect(refused.headers.get('x-error-code')).toBe('SDC_LOW_SPACE');
    expect(await refused.text()).toMatch(/short of space: .*SDC_MIN_FREE\). Nothing was stored/);
    const late = await put(early, 'not taken');
    expect([late.status, late.headers.get('x-error-code')]).toEqual([507, 'SDC_LOW_SPACE']);
    const parts = await fetch(`${server.url}/uploads/${pathOf(4)}`, { method: 'POST' });
    expect([parts.status, parts.headers.get('x-error-code')]).toEqual([507, 'SDC_LOW_SPACE']);
    const stored = await readdir(join(disk!.dir, 'store'), { recursive: true });
    expect(stored.filter((f) => f.endsWith('.cdf')).map((f) => f.split('/').at(-1))).toEqual([pathOf(1).split('/').at(-1)]);
    expect(await metric(server, 'sdc_http_errors_total\\{code="SDC_LOW_SPACE"\\}')).toBe(3);

    // Reads go on: the file stored before is found and downloaded.
    expect(await (await fetch(`${server.url}/query?file_path=${pathOf(1)}`)).json()).toHaveLength(1);
    expect(await (await fetch(`${server.url}/download/${pathOf(1)}`)).text()).toBe('stored with room');

    await rm(filler);
    expect(await readyWhen(server, false)).toMatchObject({ status: 'ready' });
    expect((await put(early, 'taken once there is room')).status).toBe(200);
  });

  it.skipIf(disk)('refuses uploads (507) under a watermark above the free space, and says so in /readyz and /metrics', async () => {
    const refused = await fetch(`${server.url}/upload/${pathOf(3)}`);
    expect([refused.status, refused.headers.get('x-error-code')]).toEqual([507, 'SDC_LOW_SPACE']);
    expect(await readyWhen(server, true)).toMatchObject({ status: 'degraded', space: { low: true } });
    expect(await metric(server, 'sdc_store_low_space')).toBe(1);
  });
});

describe('SDC_MIN_FREE', () => {
  it('takes a percentage, a size with a unit, bytes, or 0 (off); the default is 5%', () => {
    expect(parseMinFree('5%')).toEqual({ percent: 5 });
    expect(parseMinFree('20GiB')).toEqual({ bytes: 20 * 1024 ** 3 });
    expect(parseMinFree('500 MB')).toEqual({ bytes: 500e6 });
    expect(parseMinFree('1048576')).toEqual({ bytes: 1048576 });
    expect(parseMinFree('0')).toEqual({ bytes: 0 });
    expect(loadServerConfig({}).minFree).toEqual({ percent: 5 });
  });

  it('refuses anything else at start, saying what it takes', () => {
    for (const bad of ['five', '120%', '-1GiB', '10 parsecs', '1e3GB']) {
      expect(() => loadServerConfig({ SDC_MIN_FREE: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadServerConfig({ SDC_MIN_FREE: 'lots' })).toThrow(/SDC_MIN_FREE must be a percentage .* such as 5% or a size such as 20GiB/);
  });
});
