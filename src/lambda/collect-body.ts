import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ANSWER_TOO_LARGE, errorReply } from '../errors/index.js';

/**
 * API Gateway takes a Lambda answer (the whole JSON result: status, headers, body) of at
 * most 6 MB. A body is read up to 4 MB: a binary one grows by a third in base64, a text
 * one by its JSON escapes, and both still fit.
 */
export const MAX_LAMBDA_BODY_BYTES = 4 * 1024 * 1024;
export const MAX_LAMBDA_RESULT_BYTES = 6 * 1024 * 1024;

/** Headers that describe the answer that was replaced, so they go with it. */
const ANSWER_HEADERS = ['link', 'x-total-count', 'content-disposition', 'content-length', 'etag', 'last-modified', 'accept-ranges', 'content-range'];

/** Replaces the answer being sent with the 400 that asks for pages. */
export function refuseTooLarge(reply: FastifyReply, limit: number): string {
  for (const name of ANSWER_HEADERS) reply.removeHeader(name);
  // The body a JSON string, as the query's answers are (docs/api.md).
  const answer = errorReply(ANSWER_TOO_LARGE.create(limit), { 'Content-Type': 'application/json; charset=utf-8' });
  reply.code(answer.statusCode).headers(answer.headers);
  return JSON.stringify(answer.body);
}

/**
 * Lambda answers in one piece, so every answer is held to `limit` bytes, and every streamed answer (a query's records, a portal
 * asset) is collected before it is sent, up to `limit` bytes. Past it the reading stops
 * (the catalog's cursor is closed with the stream) and the client gets a 400 that asks
 * for pages, never API Gateway's bare 502. An answer that fits goes whole, as the server
 * sends an answer of one chunk.
 */
export function capStreamedAnswers(app: FastifyInstance, limit = MAX_LAMBDA_BODY_BYTES): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      return Buffer.byteLength(payload) > limit ? refuseTooLarge(reply, limit) : payload;
    }
    if (!(payload instanceof Readable)) return payload;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of payload as AsyncIterable<Buffer | string>) {
      const piece = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += piece.length;
      // Leaving the loop destroys the stream, which ends the query's cursor.
      if (bytes > limit) return refuseTooLarge(reply, limit);
      chunks.push(piece);
    }
    return Buffer.concat(chunks);
  });
}
