import { callerOf } from './caller.js';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { feedStart, parseFeedRequest, watch, type ServiceContext } from '../service/index.js';
import { FEED_FULL, INVALID_QUERY, raise, TOO_MANY_FEEDS } from '../errors/index.js';
import { queryPairs } from './api-routes.js';
import { sendError } from './error-answer.js';
import { clientAddress } from './client-address.js';
import { FeedSlots, feedSource } from './feed-slots.js';
import { eventsSchema } from './query-schemas.js';

/** Comment line sent when idle, so proxies keep the connection open. */
const HEARTBEAT_MS = 15_000;

const EVENT_STREAM = 'text/event-stream; charset=utf-8';

/**
 * Open feeds at once, per source (an IPv4 address or an IPv6 /64: feed-slots.ts) and in all.
 * Each polls the catalog twice a second for as long as it is open, so their number is what
 * bounds that work: a client needs one feed per filter, not hundreds.
 */
export const MAX_FEEDS_PER_ADDRESS = 8;
const MAX_FEEDS = 512;

/** The feed's caps; smaller ones only in tests, which fill them with real connections. */
export interface FeedCaps {
  /** Open feeds in all (512). */
  readonly total?: number;
  /** Open feeds per source (MAX_FEEDS_PER_ADDRESS). */
  readonly perSource?: number;
}

/**
 * GET /events: the live feed as Server-Sent Events, served from the change log: one `file`
 * event per record as it is indexed, one `withdrawn` event per withdrawal, each with the log's
 * id (the client sends it back as Last-Event-ID; docs/api.md "The change log").
 */
export function feedRoute(ctx: ServiceContext, { total = MAX_FEEDS, perSource = MAX_FEEDS_PER_ADDRESS }: FeedCaps = {}) {
  return async function (app: FastifyInstance): Promise<void> {
    // Open feeds never finish by themselves: end them when the server closes.
    const open = new Set<AbortController>();
    const slots = new FeedSlots<AbortController>(total, perSource);
    app.addHook('preClose', async () => {
      for (const feed of open) feed.abort();
    });

    // Filters are checked by parseFeedRequest, with the spec's messages (query-schemas.ts).
    app.get('/events', { schema: eventsSchema(ctx.mission), attachValidation: true, config: { access: 'read' } }, async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const parsed = parseFeedRequest(ctx, queryPairs(request.url), Array.isArray(lastEventId) ? lastEventId[0] : lastEventId);
      if (!parsed.ok) return sendError(reply, INVALID_QUERY.create(parsed.message));
      // HEAD (Fastify's automatic one) says what a GET would open, and ends: a feed never does.
      if (request.method === 'HEAD') return reply.code(200).type(EVENT_STREAM).header('Cache-Control', 'no-cache').send();

      // Where the feed starts, read before it opens: a catalog that fails is an error answer.
      const after = await feedStart(ctx, parsed.after);
      const source = feedSource(clientAddress(request));
      const abort = new AbortController();
      const admission = slots.admit(source, abort);
      if (admission.kind === 'too-many') return sendError(reply, TOO_MANY_FEEDS.create(perSource));
      if (admission.kind === 'full') return sendError(reply, raise(FEED_FULL, [], { headers: { 'Retry-After': '30' } }));
      // A newcomer took the slot of the largest holder's oldest feed: that one ends (its client resumes).
      admission.evicted?.abort();
      open.add(abort);
      request.raw.on('close', () => abort.abort());
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        // What the hooks set (CORS policy, X-Request-Id): a hijacked reply does not send them by itself.
        ...(reply.getHeaders() as Record<string, string>),
        'Content-Type': EVENT_STREAM,
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
      });
      // A reader slower than the archive (a replay from an old id) holds the feed back, not our memory.
      const send = async (text: string) => {
        if (!out.write(text)) await once(out, 'drain', { signal: abort.signal });
      };
      out.write('retry: 2000\n\n');
      // Where this connection starts, as an id: a client that loses the connection before the
      // first file resumes from here instead of from its reconnection (no gap).
      out.write(`id: ${after}\nevent: start\ndata: {}\n\n`);
      const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
      try {
        for await (const event of watch(ctx, parsed.filter, after, abort.signal, {}, callerOf(request))) {
          // A created file keeps the event clients know (`file`); a withdrawal is its own type.
          await send(`id: ${event.id}\nevent: ${event.change === 'created' || event.change === 'released' ? 'file' : event.change}\ndata: ${event.record}\n\n`);
        }
      } catch (err) {
        if (!abort.signal.aborted) request.log.error({ err }, 'live feed stopped');
      } finally {
        clearInterval(heartbeat);
        open.delete(abort);
        slots.release(source, abort);
        out.end();
      }
    });
  };
}
