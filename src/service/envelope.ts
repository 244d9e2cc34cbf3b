import { errorReply, type ServerError } from '../errors/index.js';

/**
 * The response envelope (docs/api.md, How the endpoints map to HTTP): what every service operation returns,
 * whatever carries it (Fastify, API Gateway).
 */
export interface Envelope {
  readonly statusCode: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A text (whole, or a TextStream of its pieces), a JSON value, or records to stream as a JSON array. */
  readonly body: string | TextStream | object | AsyncIterable<unknown>;
}

/**
 * One text body produced piece by piece, so a large answer (the earlier form's query
 * string) never sits whole in memory. It is a string: carriers encode it as they
 * would a string.
 */
export class TextStream implements AsyncIterable<string> {
  constructor(private readonly pieces: () => AsyncIterable<string>) {}

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return this.pieces()[Symbol.asyncIterator]();
  }
}

/**
 * A JSON text produced piece by piece (a release and its manifest: releases.ts): sent as it is,
 * never quoted as a string, so a large document streams without sitting whole in memory.
 */
export class JsonTextStream extends TextStream {}

export function isJsonTextStream(body: Envelope['body']): body is JsonTextStream {
  return body instanceof JsonTextStream;
}

export function isTextStream(body: Envelope['body']): body is TextStream {
  return body instanceof TextStream;
}

export function isRecordStream(body: Envelope['body']): body is AsyncIterable<unknown> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body && !(body instanceof TextStream);
}

/** The headers of every query answer (docs/api.md, How the endpoints map to HTTP). */
export const QUERY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/json',
  'Access-Control-Allow-Origin': '*',
});

/**
 * A declared error as an envelope: its status, its text as the body, its code in
 * X-Error-Code (errors/server-error.ts). `headers` carries what the answer's kind needs
 * besides (the query's Content-Type, so its 400 is a JSON string (docs/api.md, The three endpoints)).
 */
export function failure(error: ServerError, headers: Readonly<Record<string, string>> = {}): Envelope {
  return errorReply(error, headers);
}
