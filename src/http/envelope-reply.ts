import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { isRecordStream, renderRecords, type Envelope } from '../service/index.js';

/**
 * Envelope -> HTTP response (DESIGN 3), the one place the rule lives:
 * status = statusCode, envelope headers applied; records stream as a JSON array;
 * other objects are JSON-encoded; a string is JSON-encoded when the answer is JSON
 * (a success, or an envelope that says application/json), else sent as plain text.
 */
export function sendEnvelope(reply: FastifyReply, envelope: Envelope): FastifyReply {
  reply.code(envelope.statusCode);
  if (envelope.headers) reply.headers(envelope.headers);
  const declared = String(reply.getHeader('content-type') ?? '');
  const { body } = envelope;
  if (isRecordStream(body)) {
    if (!declared) reply.type('application/json');
    return reply.send(Readable.from(renderRecords(body, String(reply.getHeader('content-type'))), { objectMode: false }));
  }
  if (typeof body === 'string') {
    const json = declared.startsWith('application/json') || (!declared && envelope.statusCode < 300);
    if (json) return reply.type('application/json').send(JSON.stringify(body));
    if (!declared) reply.type('text/plain; charset=utf-8');
    return reply.send(body);
  }
  if (!declared) reply.type('application/json');
  return reply.send(JSON.stringify(body));
}
