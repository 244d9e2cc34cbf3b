import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { syntheticRecords } from '../../src/catalog/index.js';
import { MAX_FEEDS_PER_ADDRESS } from '../../src/http/feed-route.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/** Resolves with the first bytes the server sends on `socket` (its status line). */
const firstBytes = (socket: Socket) => new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));

/** Resolves once every one of `sockets` is closed. */
const allClosed = (sockets: readonly Socket[]) =>
  Promise.all(sockets.map((socket) => (socket.closed ? undefined : new Promise((resolve) => socket.once('close', resolve)))));

/** Opens GET /events on a raw socket that never reads (paused): the slowest possible reader. */
function openFeed(server: TestServer, lastEventId?: string): Socket {
  const { hostname, port } = new URL(server.url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.on('error', () => undefined);
  socket.write(`GET /events HTTP/1.1\r\nHost: x\r\n${lastEventId ? `Last-Event-ID: ${lastEventId}\r\n` : ''}\r\n`);
  return socket;
}

describe('the live feed and large answers under greedy and slow clients', () => {
  let server: TestServer;
  const serverSockets: Socket[] = [];

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: '0' });
    server.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    // About 12 MB of feed events: far more than socket buffers hold.
    const records = [...syntheticRecords(server.ctx.mission, 30_000)];
    await server.ctx.catalog.insertMany(records);
  });
  afterAll(async () => {
    await server.stop();
  });

  it(`one address holds at most ${MAX_FEEDS_PER_ADDRESS} feeds open; closing one frees its place`, async () => {
    const before = serverSockets.length;
    const feeds = Array.from({ length: MAX_FEEDS_PER_ADDRESS }, () => openFeed(server));
    // Every feed holds its place once the server has answered it.
    for (const status of await Promise.all(feeds.map(firstBytes))) expect(status).toMatch(/^HTTP\/1\.1 200/);
    const refused = await fetch(`${server.url}/events`);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toMatch(/at most 8 at once/);
    feeds[0]!.destroy();
    // The place is freed when the server sees the close; until then a try may still be refused.
    const controller = new AbortController();
    const again = await vi.waitFor(
      async () => {
        const answer = await fetch(`${server.url}/events`, { signal: controller.signal });
        if (answer.status !== 200) throw new Error(`still refused: ${answer.status}`);
        return answer;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(again.status).toBe(200);
    controller.abort();
    for (const feed of feeds) feed.destroy();
    // The next test counts its own sockets: the server has closed the feeds' ends first.
    const feedPorts = new Set(feeds.map((feed) => feed.localPort));
    await allClosed(serverSockets.slice(before).filter((socket) => feedPorts.has(socket.remotePort)));
  });

  it('a reader that replays the archive and never reads does not pile the archive up in server memory', async () => {
    const before = serverSockets.length;
    const slow = openFeed(server, '0'); // the change log from its start
    slow.pause();
    // Wait until the server's writes back up (the socket buffers are full), then until it has
    // answered a later request, so it had every chance to pile more up before we look.
    // The server's end of this reader's connection (other clients' connections may come and go).
    const mine = () => serverSockets.slice(before).filter((socket) => socket.remotePort === slow.localPort);
    await vi.waitFor(() => expect(mine().some((socket) => socket.writableNeedDrain)).toBe(true), { timeout: 20_000, interval: 20 });
    expect((await fetch(`${server.url}/query?file_path=${SAMPLE_PATH}`)).status).toBe(200);
    expect(mine().length).toBe(1);
    // Backpressure: what waits in the server's own buffer stays about one write, not megabytes.
    expect(mine()[0]!.writableLength).toBeLessThan(256 * 1024);
    slow.destroy();
  });

  it('a query reader that never reads holds no lock: uploads and other queries go on', async () => {
    const { hostname, port } = new URL(server.url);
    const slow = connect({ host: hostname, port: Number(port) });
    slow.on('error', () => undefined);
    slow.write('GET /query HTTP/1.1\r\nHost: x\r\n\r\n');
    const before = serverSockets.length;
    slow.pause();
    // The server has started answering the stalled reader (and holds whatever it holds) before the others come.
    await vi.waitFor(() => expect(serverSockets.slice(before).some((socket) => socket.remotePort === slow.localPort && socket.bytesWritten > 0)).toBe(true), { timeout: 10_000, interval: 20 });
    expect((await uploadFile(server.url, SAMPLE_PATH, 'written while a reader stalls')).status).toBe(200);
    expect((await fetch(`${server.url}/query?file_path=${SAMPLE_PATH}`)).status).toBe(200);
    slow.destroy();
  });
});
