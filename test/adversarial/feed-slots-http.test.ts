import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { feedRoute } from '../../src/http/feed-route.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** Small caps, so real connections fill them: 6 feeds in all, 3 per source (feed-route.ts). */
const TOTAL = 6;
const PER_SOURCE = 3;

/** One live feed as a browser would hold it, from a chosen loopback address (127.0.0.0/8 is all ours). */
interface Feed {
  readonly from: string;
  readonly status: number;
  readonly contentType: string;
  /** X-Error-Code of a refusal (docs/api.md). */
  readonly errorCode: string | undefined;
  readonly retryAfter: string | undefined;
  readonly body: () => string;
  /** Settles when the server ends the answer. */
  readonly ended: Promise<void>;
  hasEnded: boolean;
  readonly request: ClientRequest;
}

describe('the live feed keeps room for newcomers, over HTTP', () => {
  let server: TestServer | undefined;
  const feeds: Feed[] = [];
  afterEach(async () => {
    for (const feed of feeds.splice(0)) feed.request.destroy();
    await server?.stop();
    server = undefined;
  });

  /** GET /events from `from`: resolves once the status and headers are in (a slot is then held or refused). */
  function openFeed(from: string): Promise<Feed> {
    const { hostname, port } = new URL(server!.url);
    return new Promise((resolve, reject) => {
      const request = httpRequest({ host: hostname, port, path: '/events', localAddress: from, agent: false, headers: { Accept: 'text/event-stream' } }, (res: IncomingMessage) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        const feed: Feed = {
          from,
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type']),
          errorCode: res.headers['x-error-code'] as string | undefined,
          retryAfter: res.headers['retry-after'],
          body: () => text,
          ended: new Promise((done) => res.on('end', () => done())),
          hasEnded: false,
          request,
        };
        void feed.ended.then(() => (feed.hasEnded = true));
        feeds.push(feed);
        resolve(feed);
      });
      request.on('error', reject);
      request.end();
    });
  }

  async function openLive(from: string): Promise<Feed> {
    const feed = await openFeed(from);
    expect([feed.from, feed.status, feed.contentType]).toEqual([from, 200, 'text/event-stream; charset=utf-8']);
    return feed;
  }

  it('with every slot taken, a newcomer from a new address gets a feed and the largest holder gives up its oldest', async () => {
    server = await startTestServer({}, {}, undefined, { feed: (ctx) => feedRoute(ctx, { total: TOTAL, perSource: PER_SOURCE }) });
    // 127.0.0.2 holds 3, 127.0.0.3 holds 2, 127.0.0.4 holds 1: all six slots taken.
    const held: Feed[] = [];
    for (const [from, count] of [['127.0.0.2', 3], ['127.0.0.3', 2], ['127.0.0.4', 1]] as const) {
      for (let i = 0; i < count; i++) held.push(await openLive(from));
    }
    const newcomer = await openLive('127.0.0.5');
    // The largest holder's oldest feed is ended by the server (its client resumes with Last-Event-ID).
    await held[0]!.ended;
    expect(held[0]!.body()).toMatch(/event: start/);
    // The newcomer's feed is live, and no other feed was touched.
    await expect.poll(() => newcomer.body()).toMatch(/event: start/);
    expect(newcomer.hasEnded).toBe(false);
    expect(held.slice(1).map((f) => f.hasEnded)).toEqual([false, false, false, false, false]);

    // Now 2 + 2 + 1 + 1: a second newcomer takes the oldest feed of a source holding two.
    const second = await openLive('127.0.0.6');
    await Promise.race([held[1]!.ended, held[3]!.ended]);
    expect([held[1]!.hasEnded || held[3]!.hasEnded, second.hasEnded]).toEqual([true, false]);
  }, 60_000);

  it('when the slots are shared evenly the instance is full (503 with Retry-After), not taken from anyone', async () => {
    server = await startTestServer({}, {}, undefined, { feed: (ctx) => feedRoute(ctx, { total: TOTAL, perSource: PER_SOURCE }) });
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7']) await openLive(from);
    const refused = await openFeed('127.0.0.8');
    await refused.ended;
    expect([refused.status, refused.errorCode, refused.retryAfter]).toEqual([503, 'SDC_FEED_FULL', '30']);
    expect(feeds.filter((f) => f.status === 200).map((f) => f.hasEnded)).toEqual([false, false, false, false, false, false]);
  }, 60_000);

  it('one source cannot hold more than its share: the next feed from it is a 429, whoever else holds what', async () => {
    server = await startTestServer({}, {}, undefined, { feed: (ctx) => feedRoute(ctx, { total: TOTAL, perSource: PER_SOURCE }) });
    for (let i = 0; i < PER_SOURCE; i++) await openLive('127.0.0.2');
    const refused = await openFeed('127.0.0.2');
    await refused.ended;
    expect([refused.status, refused.errorCode]).toEqual([429, 'SDC_TOO_MANY_FEEDS']);
    expect(refused.body()).toContain(`at most ${PER_SOURCE} at once`);
    // Its feeds stay open, and another address is let in.
    await openLive('127.0.0.3');
    expect(feeds.filter((f) => f.from === '127.0.0.2' && f.status === 200).map((f) => f.hasEnded)).toEqual([false, false, false]);
  }, 60_000);
});
