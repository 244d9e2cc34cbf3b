import { ERROR_TEXT_TYPE } from '../errors/index.js';
import { isRecordStream, isTextStream, renderRecords, type Envelope } from '../service/index.js';

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
 * Envelope -> HTTP answer (DESIGN 3), the one place the rule lives, pure:
 * status = statusCode, envelope headers applied; records stream in the representation
 * their Content-Type names (record-formats.ts); other objects are JSON-encoded; a
 * string (whole or streamed) is JSON-encoded when the answer is JSON (a success, or
 * an envelope that says application/json), else sent as plain text.
 */
export function renderEnvelope(envelope: Envelope): RenderedEnvelope {
  const headers: Record<string, string> = {};
  let declared = '';
  for (const [name, value] of Object.entries(envelope.headers ?? {})) {
    if (name.toLowerCase() === 'content-type') declared = value;
    else headers[name] = value;
  }
  const answer = (contentType: string, body: RenderedEnvelope['body']): RenderedEnvelope => ({
    statusCode: envelope.statusCode,
    headers: { 'content-type': contentType, ...headers },
    body,
  });
  const { body } = envelope;
  const json = declared.startsWith('application/json') || (!declared && envelope.statusCode < 300);
  if (isTextStream(body)) return json ? answer(JSON_TYPE, jsonString(body)) : answer(declared || TEXT_TYPE, batched(body));
  if (isRecordStream(body)) {
    const type = declared || JSON_TYPE;
    return answer(type, renderRecords(body, type));
  }
  if (typeof body === 'string') return json ? answer(JSON_TYPE, JSON.stringify(body)) : answer(declared || TEXT_TYPE, body);
  return answer(declared || JSON_TYPE, JSON.stringify(body));
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
