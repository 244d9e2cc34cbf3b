import { ERROR_TEXT_TYPE } from '../errors/index.js';
import { isJsonTextStream, isRecordStream, isTextStream, renderRecords, type Envelope } from '../service/index.js';

/** An envelope as an HTTP answer: what Fastify sends and what Lambda returns to API Gateway. */
export interface RenderedEnvelope {
  readonly statusCode: number;
  /** The envelope's headers (all of them, Access-Control-* included) and the Content-Type chosen. */
  readonly headers: Readonly<Record<string, string>>;
  /** Text, whole or produced chunk by chunk as records or pieces arrive. */
  readonly body: string | AsyncIterable<string>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = ERROR_TEXT_TYPE;

/**
 * Envelope -> HTTP answer (docs/api.md, How the endpoints map to HTTP), the one place the rule lives, pure:
 * status = statusCode, envelope headers applied; records stream in the representation
 * their Content-Type names (record-formats.ts); other objects are JSON-encoded; a
 * string (whole or streamed) is JSON-encoded when the answer is JSON (a success, or
 * an envelope that says application/json), else sent as plain text.
 */
export function renderEnvelope(envelope: Envelope): RenderedEnvelope {
  // Content-Type first (its value is chosen below), then the envelope's own headers in their order.
  const headers: Record<string, string> = { 'content-type': '' };
  let declared = '';
  const own = envelope.headers;
  if (own !== undefined) {
    for (const name in own) {
      if (name.length === 12 && name.toLowerCase() === 'content-type') declared = own[name]!;
      else headers[name] = own[name]!;
    }
  }
  const { body, statusCode } = envelope;
  const json = declared.startsWith('application/json') || (!declared && statusCode < 300);
  let type: string;
  let rendered: RenderedEnvelope['body'];
  if (isJsonTextStream(body)) {
    type = declared || JSON_TYPE;
    rendered = batched(body);
  } else if (isTextStream(body)) {
    type = json ? JSON_TYPE : declared || TEXT_TYPE;
    rendered = json ? jsonString(body) : batched(body);
  } else if (isRecordStream(body)) {
    type = declared || JSON_TYPE;
    rendered = renderRecords(body, type);
  } else if (typeof body === 'string') {
    type = json ? JSON_TYPE : declared || TEXT_TYPE;
    rendered = json ? JSON.stringify(body) : body;
  } else {
    type = declared || JSON_TYPE;
    rendered = JSON.stringify(body);
  }
  headers['content-type'] = type;
  return { statusCode, headers, body: rendered };
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
