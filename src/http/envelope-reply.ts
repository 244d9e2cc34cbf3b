import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Envelope } from '../service/index.js';
import { renderEnvelope } from './envelope-render.js';

/**
 * Envelope -> Fastify response, by the one rule in envelope-render.ts. CORS headers are
 * the HTTP layer's policy (cors.ts, SDC_CORS_ORIGIN), so the envelope's own (docs/api.md, How the endpoints map to HTTP:
 * `*`, the default policy) are left to it.
 */
export function sendEnvelope(reply: FastifyReply, envelope: Envelope): FastifyReply | Promise<FastifyReply> {
  const rendered = renderEnvelope(envelope);
  reply.code(rendered.statusCode);
  const headers = rendered.headers;
  for (const name in headers) if (!isAccessControl(name)) reply.header(name, headers[name]);
  return typeof rendered.body === 'string' ? reply.send(rendered.body) : send(reply, rendered.body);
}

/** True for an Access-Control-* header name, in any case. */
function isAccessControl(name: string): boolean {
  return name.length > 15 && (name.charCodeAt(0) | 0x20) === 0x61 && name.slice(0, 15).toLowerCase() === 'access-control-';
}

/**
 * Sends chunked text. An answer that fits in one chunk (most answers) goes out whole,
 * with Content-Length, in one write; a longer one streams as its chunks are produced.
 */
async function send(reply: FastifyReply, chunks: AsyncIterable<string>): Promise<FastifyReply> {
  const it = chunks[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return reply.send('');
  const second = await it.next();
  if (second.done) return reply.send(first.value);
  return reply.send(
    Readable.from(
      (async function* () {
        yield first.value;
        yield second.value;
        for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
      })(),
      { objectMode: false },
    ),
  );
}
