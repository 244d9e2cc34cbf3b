import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { isRecordStream, isTextStream, renderRecords, type Envelope } from '../service/index.js';

/**
 * Envelope -> HTTP response (DESIGN 3), the one place the rule lives:
 * status = statusCode, envelope headers applied; records stream in the representation
 * their Content-Type names (record-formats.ts);
 * other objects are JSON-encoded; a string (whole or streamed) is JSON-encoded when the
 * answer is JSON (a success, or an envelope that says application/json), else sent as
 * plain text. CORS headers are the HTTP layer's policy (cors.ts, SDC_CORS_ORIGIN), so
 * the envelope's own (spec 4.3: `*`, the default policy) are left to it.
 */
export async function sendEnvelope(reply: FastifyReply, envelope: Envelope): Promise<FastifyReply> {
  reply.code(envelope.statusCode);
  for (const [name, value] of Object.entries(envelope.headers ?? {})) {
    if (!/^access-control-/i.test(name)) reply.header(name, value);
  }
  const declared = String(reply.getHeader('content-type') ?? '');
  const { body } = envelope;
  const json = declared.startsWith('application/json') || (!declared && envelope.statusCode < 300);
  if (isTextStream(body)) {
    if (json) return send(reply.type('application/json'), jsonString(body));
    if (!declared) reply.type('text/plain; charset=utf-8');
    return send(reply, batched(body));
  }
  if (isRecordStream(body)) {
    if (!declared) reply.type('application/json');
    return send(reply, renderRecords(body, String(reply.getHeader('content-type'))));
  }
  if (typeof body === 'string') {
    if (json) return reply.type('application/json').send(JSON.stringify(body));
    if (!declared) reply.type('text/plain; charset=utf-8');
    return reply.send(body);
  }
  if (!declared) reply.type('application/json');
  return reply.send(JSON.stringify(body));
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

/** Chunk size of a streamed text: big enough to keep writes few, small enough to stay flat. */
const CHUNK = 64 * 1024;

/** The pieces regrouped into chunks of about CHUNK characters. */
async function* batched(pieces: AsyncIterable<string>): AsyncIterable<string> {
  let buffer = '';
  for await (const piece of pieces) {
    buffer += piece;
    if (buffer.length >= CHUNK) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}

/**
 * A streamed text as one JSON string literal. JSON escapes character by character, so
 * each piece's escaped inside, between one pair of quotes, is the escape of the whole.
 */
async function* jsonString(pieces: AsyncIterable<string>): AsyncIterable<string> {
  yield* batched(
    (async function* () {
      yield '"';
      for await (const piece of pieces) yield JSON.stringify(piece).slice(1, -1);
      yield '"';
    })(),
  );
}
