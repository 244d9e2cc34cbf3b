import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../helpers/raw-http.js';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { recordFigures, scale } from '../reliability/figures.js';

/** How often one upload address is replayed in each broken way. */
const REPLAYS = scale(200, 500);
/** Replays sent at once. */
const AT_ONCE = 20;

const pathOf = (n: number) => `imap/swe/l1a/2024/01/imap_swe_l1a_leak_20240105_20240105_v00-${String(n).padStart(2, '0')}.cdf`;

/**
 * The open file descriptors of a process: `files` (the store's files, its notes and temporary
 * uploads, under `<home>/store`, and pipes: what a write that never ends holds) and `sockets`.
 * The catalog's files are left out: its reading threads open the database, WAL and shared
 * memory when they first run, which on a loaded machine can be after the baseline. Sockets are
 * compared with a little slack: keep-alive connections of the test's own fetch come and go with its pool.
 */
async function openFds(pid: number, home: string): Promise<{ files: number; sockets: number }> {
  const fds = await readdir(`/proc/${pid}/fd`);
  const targets = (await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => undefined)))).filter((t) => t !== undefined);
  const sockets = targets.filter((t) => t.startsWith('socket:')).length;
  const files = targets.filter((t) => t.startsWith(join(home, 'store')) || t.startsWith('pipe:')).length;
  return { files, sockets };
}

const SOCKET_SLACK = 4;

/** Back to the baseline: no more files open, no more sockets than the slack. */
const atBaseline = (baseline: { files: number; sockets: number }) => (v: { files: number; sockets: number }) =>
  v.files <= baseline.files && v.sockets <= baseline.sockets + SOCKET_SLACK;

/** Temporary upload files anywhere under the store. */
async function tempFiles(home: string): Promise<number> {
  const entries = await readdir(join(home, 'store'), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.startsWith('.upload-')).length;
}

/** Headers and part of a body, then a TCP reset (RST) instead of an orderly close. */
function resetAfter(base: string, bytes: string, afterMs: number): Promise<void> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined);
    socket.write(bytes, () => setTimeout(() => (socket.resetAndDestroy(), resolve()), afterMs));
  });
}

async function inBatches(count: number, one: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += AT_ONCE) {
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, count - i) }, (_, j) => one(i + j).catch(() => undefined)));
  }
}

/** Polls until `check` holds or `ms` pass; returns the last values seen. */
async function settle<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let value = await read();
  while (!check(value) && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

describe('no resource outlives a PUT to the store that ends early', () => {
  let home: string;
  let server: ChildServer;
  let pid: number;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-leaks-'));
    server = await startChildServer(home, { SDC_RATE_LIMIT: '0' });
    pid = server.process.pid!;
  });
  afterAll(async () => {
    server.process.kill('SIGKILL');
    await server.exited;
    await rm(home, { recursive: true, force: true });
  });

  /** A fresh signed PUT address, as request target and Host. */
  async function address(n: number): Promise<{ target: string; host: string }> {
    const res = await fetch(`${server.url}/upload/${pathOf(n)}`);
    expect(res.status).toBe(200);
    const url = new URL((await res.json()) as string);
    return { target: `${url.pathname}${url.search}`, host: url.host };
  }

  it(`one address replayed ${REPLAYS} times in each broken way leaves no handle and no temporary file`, { timeout: scale(120_000, 300_000) }, async () => {
    // Warm up: one whole upload and download, so lazily opened files (WAL, logs) are counted in the baseline.
    const warm = await address(1);
    expect((await fetch(`${server.url}${warm.target}`, { method: 'PUT', body: 'warm', headers: { 'Content-Type': '' } })).status).toBe(200);
    expect((await fetch(`${server.url}/download/${pathOf(1)}`)).status).toBe(200);
    const baseline = await settle(() => openFds(pid, home), () => true);

    const head = (a: { target: string; host: string }, extra: string) => `PUT ${a.target} HTTP/1.1\r\nHost: ${a.host}\r\n${extra}\r\n`;
    const ways: Record<string, (a: { target: string; host: string }) => Promise<unknown>> = {
      'FIN right after the headers': (a) => rawExchange(server.url, head(a, 'Content-Length: 1000\r\n'), { halfClose: true }),
      'a body shorter than its Content-Length': (a) =>
        rawExchange(server.url, `${head(a, 'Content-Length: 1000\r\n')}${'x'.repeat(100)}`, { halfClose: true }),
      'bad chunked framing': (a) =>
        rawExchange(server.url, `${head(a, 'Transfer-Encoding: chunked\r\n')}5\r\nhello\r\nzz\r\nnot a chunk\r\n\r\n`, { halfClose: true }),
      'bytes after the body': (a) => rawExchange(server.url, `${head(a, 'Content-Length: 5\r\n')}hello\x00\x01\x02 garbage\r\n\r\n`, { halfClose: true }),
      'a client reset mid-body': (a) => resetAfter(server.url, `${head(a, 'Content-Length: 1000\r\n')}${'x'.repeat(100)}`, 5),
    };
    const figures: Record<string, number> = { replaysPerWay: REPLAYS, ways: 5, filesOpenAtBaseline: baseline.files };
    const leaks: { way: string; filesOverBaseline: number; socketsOverSlack: number; temps: number }[] = [];
    let n = 10;
    for (const [way, send] of Object.entries(ways)) {
      const a = await address(n++);
      await inBatches(REPLAYS, () => send(a));
      const fds = await settle(() => openFds(pid, home), atBaseline(baseline));
      const temps = await settle(() => tempFiles(home), (v) => v === 0);
      figures[`filesOpenAfter ${way}`] = fds.files;
      leaks.push({ way, filesOverBaseline: Math.max(0, fds.files - baseline.files), socketsOverSlack: Math.max(0, fds.sockets - baseline.sockets - SOCKET_SLACK), temps });
    }
    expect(leaks).toEqual(Object.keys(ways).map((way) => ({ way, filesOverBaseline: 0, socketsOverSlack: 0, temps: 0 })));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    recordFigures('storeLeaks', figures);
  });

  it('one address cannot be replayed into concurrent writes: one at a time per name, the rest 409 at once', { timeout: 60_000 }, async () => {
    const baseline = await settle(() => openFds(pid, home), () => true);
    const a = await address(40);
    const replays = REPLAYS;
    const { hostname, port } = new URL(server.url);
    const answers: Promise<string>[] = [];
    const sockets = Array.from({ length: replays }, (_, i) => {
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on('error', () => undefined);
      answers[i] = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
        socket.on('close', () => resolve(text));
        // Whoever did not answer within the wait is still being stored.
        setTimeout(() => resolve(text), 5000);
      });
      // Headers and part of the body, then the client stalls: each would hold a write open.
      socket.write(`PUT ${a.target} HTTP/1.1\r\nHost: ${a.host}\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`);
      return socket;
    });
    const texts = await Promise.all(answers);
    const refused = texts.filter((t) => t.startsWith('HTTP/1.1 409')).length;
    const pending = texts.filter((t) => t === '').length;
    expect(pending).toBeLessThanOrEqual(1);
    expect(refused).toBeGreaterThanOrEqual(replays - 1);
    expect(texts.find((t) => t.startsWith('HTTP/1.1 409'))).toMatch(/under way/);
    for (const s of sockets) s.resetAndDestroy();
    const after = await settle(() => openFds(pid, home), atBaseline(baseline));
    expect(atBaseline(baseline)(after)).toBe(true);
    expect(await settle(() => tempFiles(home), (v) => v === 0)).toBe(0);
    // The name is free again: a whole upload to the same address is stored.
    expect((await fetch(`${server.url}${a.target}`, { method: 'PUT', body: 'whole', headers: { 'Content-Type': '' } })).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
