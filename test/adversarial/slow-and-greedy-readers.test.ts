import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/index.js';
import { MAX_FEEDS_PER_ADDRESS } from '../../src/http/feed-route.js';
import { feedEventId } from '../../src/service/index.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const feeds = Array.from({ length: MAX_FEEDS_PER_ADDRESS }, () => openFeed(server));
    await settle(300);
    const refused = await fetch(`${server.url}/events`);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toMatch(/at most 8 at once/);
    feeds[0]!.destroy();
    await settle(300);
    const controller = new AbortController();
    const again = await fetch(`${server.url}/events`, { signal: controller.signal });
    expect(again.status).toBe(200);
    controller.abort();
    for (const feed of feeds) feed.destroy();
    await settle(300);
  });

  it('a reader that replays the archive and never reads does not pile the archive up in server memory', async () => {
    const before = serverSockets.length;
    const slow = openFeed(server, feedEventId({ key: '1970-01-01T00:00:00.000Z', file_path: '' }));
    slow.pause();
    await settle(2000);
    const mine = serverSockets.slice(before);
    expect(mine.length).toBe(1);
    // Backpressure: what waits in the server's own buffer stays about one write, not megabytes.
    expect(mine[0]!.writableLength).toBeLessThan(256 * 1024);
    slow.destroy();
  });

  it('a query reader that never reads holds no lock: uploads and other queries go on', async () => {
    const { hostname, port } = new URL(server.url);
    const slow = connect({ host: hostname, port: Number(port) });
    slow.on('error', () => undefined);
    slow.write('GET /query HTTP/1.1\r\nHost: x\r\n\r\n');
    slow.pause();
    await settle(1000);
    expect((await uploadFile(server.url, SAMPLE_PATH, 'written while a reader stalls')).status).toBe(200);
    expect((await fetch(`${server.url}/query?file_path=${SAMPLE_PATH}`)).status).toBe(200);
    slow.destroy();
  });
});
