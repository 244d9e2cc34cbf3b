import type { FastifyInstance } from 'fastify';
import { parseFeedRequest, watch, type ServiceContext } from '../service/index.js';
import { queryPairs } from './api-routes.js';

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

    app.get('/events', async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const parsed = parseFeedRequest(ctx, queryPairs(request.url), Array.isArray(lastEventId) ? lastEventId[0] : lastEventId);
      if (!parsed.ok) return reply.code(400).type('text/plain; charset=utf-8').send(parsed.message);

      const abort = new AbortController();
      open.add(abort);
      request.raw.on('close', () => abort.abort());
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache',
        Connection: 'keep-alive',
        'Access-Control-Allow-Origin': '*',
        'X-Request-Id': request.id,
      });
      out.write('retry: 2000\n\n');
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
