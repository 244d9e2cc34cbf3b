import { QUERY_HEADERS } from '../service/index.js';
import type { RenderedEnvelope } from '../http/envelope-render.js';

/**
 * API Gateway takes a Lambda answer of at most 6 MB, JSON-escaped; a body of 4 MB
 * stays inside it even when every quote is escaped.
 */
export const MAX_LAMBDA_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Lambda answers in one piece, so a streamed query body is collected here, up to
 * `limit` bytes. Past it, the reading stops (the catalog's cursor is closed) and the
 * caller gets a 400 that asks for a narrower query, instead of API Gateway's bare 502.
 */
export async function collectBody(rendered: RenderedEnvelope, limit = MAX_LAMBDA_BODY_BYTES): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
  if (typeof rendered.body === 'string') return { ...rendered, headers: { ...rendered.headers }, body: rendered.body };
  const parts: string[] = [];
  let bytes = 0;
  for await (const chunk of rendered.body) {
    bytes += Buffer.byteLength(chunk);
    if (bytes > limit) {
      const message = `The query matches more records than one answer of this deployment can carry (${limit} bytes). Narrow it, e.g. with instrument, data_level, or start_date and end_date.`;
      return { statusCode: 400, headers: { ...QUERY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(message) };
    }
    parts.push(chunk);
  }
  return { ...rendered, headers: { ...rendered.headers }, body: parts.join('') };
}
