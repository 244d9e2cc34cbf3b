import type { FastifyInstance } from 'fastify';
import { feedEventId, parseFeedRequest, watch, type ServiceContext } from '../service/index.js';
import { queryPairs } from './api-routes.js';
import { eventsSchema } from './query-schemas.js';

/** Comment line sent when idle, so proxies keep the connection open. */
const HEARTBEAT_MS = 15_000;

/**
 * GET /events: the live feed as Server-Sent Events, one `file` event per record as it is
 * indexed, each with a resumable id (the client sends it back as Last-Event-ID).
 */
export function feedRoute(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    // Open feeds never finish by themselves: end them when the server closes.
    const open = new Set<AbortController>();
    app.addHook('preClose', async () => {
      for (const feed of open) feed.abort();
    });

    // Filters are checked by parseFeedRequest, with the spec's messages (query-schemas.ts).
    app.get('/events', { schema: eventsSchema(ctx.mission), attachValidation: true }, async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const parsed = parseFeedRequest(ctx, queryPairs(request.url), Array.isArray(lastEventId) ? lastEventId[0] : lastEventId);
      if (!parsed.ok) return reply.code(400).type('text/plain; charset=utf-8').send(parsed.message);

      const abort = new AbortController();
      open.add(abort);
      request.raw.on('close', () => abort.abort());
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        // What the hooks set (CORS policy, X-Request-Id): a hijacked reply does not send them by itself.
        ...(reply.getHeaders() as Record<string, string>),
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
      });
      out.write('retry: 2000\n\n');
      // Where this connection starts, as an id: a client that loses the connection before the
      // first file resumes from here instead of from its reconnection (no gap).
      out.write(`id: ${feedEventId(parsed.after)}\nevent: start\ndata: {}\n\n`);
      const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
      try {
        for await (const event of watch(ctx, parsed.filter, parsed.after, abort.signal)) {
          out.write(`id: ${event.id}\nevent: file\ndata: ${JSON.stringify(event.record)}\n\n`);
        }
      } catch (err) {
        request.log.error({ err }, 'live feed stopped');
      } finally {
        clearInterval(heartbeat);
        open.delete(abort);
        out.end();
      }
    });
  };
}
