/**
 * The response envelope of interface spec 2.4: what every service operation returns,
 * whatever carries it (Fastify, API Gateway).
 */
export interface Envelope {
  readonly statusCode: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A text, a JSON value, or records to stream as a JSON array. */
  readonly body: string | object | AsyncIterable<unknown>;
}

export function isRecordStream(body: Envelope['body']): body is AsyncIterable<unknown> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

/** The headers of interface spec 4.3, on every query answer. */
export const QUERY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/json',
  'Access-Control-Allow-Origin': '*',
});

export function text(statusCode: number, body: string): Envelope {
  return { statusCode, body };
}
