import { QUERY_HEADERS } from '../service/index.js';
import type { RenderedEnvelope } from '../http/envelope-render.js';

/**
 * API Gateway takes a Lambda answer of at most 6 MB, JSON-escaped; a body of 4 MB
 * stays inside it even when every quote is escaped.
 */
export const MAX_LAMBDA_BODY_BYTES = 4 * 1024 * 1024;

export interface WholeAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Lambda answers in one piece, so a streamed body is collected here, up to `limit`
 * bytes. Past it, the reading stops (the catalog's cursor is closed) and the caller
 * gets a 400 that asks for a narrower query, instead of API Gateway's bare 502.
 */
export async function collectBody(rendered: RenderedEnvelope, limit = MAX_LAMBDA_BODY_BYTES): Promise<WholeAnswer> {
  if (typeof rendered.body === 'string') return whole(rendered.statusCode, rendered.headers, rendered.body);
  const parts: string[] = [];
  let bytes = 0;
  for await (const chunk of rendered.body) {
    bytes += Buffer.byteLength(chunk);
    if (bytes > limit) {
      const message = `The query matches more records than one answer of this deployment can carry (${limit} bytes). Narrow it, e.g. with instrument, data_level, or start_date and end_date.`;
      const { 'Content-Type': _, ...headers } = QUERY_HEADERS;
      return whole(400, { 'content-type': 'application/json', ...headers }, JSON.stringify(message));
    }
    parts.push(chunk);
  }
  return whole(rendered.statusCode, rendered.headers, parts.join(''));
}

/**
 * A whole body of a JSON type names its charset, as the HTTP server (Fastify) does
 * for every answer it sends whole, so both carry the same Content-Type.
 */
function whole(statusCode: number, headers: Readonly<Record<string, string>>, body: string): WholeAnswer {
  const type = headers['content-type'];
  const out = { ...headers };
  if (type !== undefined && type.includes('json') && !/;\s*charset=/i.test(type)) out['content-type'] = `${type}; charset=utf-8`;
  return { statusCode, headers: out, body };
}
