import { parseQueryFilter } from '../catalog/index.js';
import { QUERY_HEADERS, type Envelope } from './envelope.js';
import type { ServiceContext } from './service-context.js';

/**
 * GET /query (interface spec 4.3): records matching the filter, ordered by
 * file_path and streamed a page at a time; 400 with a message for anything malformed.
 * Records carry the spec's fields (2.3) first, then ingestion_date, size and sha256.
 */
export function query(ctx: ServiceContext, pairs: Iterable<readonly [string, string]>): Envelope {
  const parsed = parseQueryFilter(pairs, ctx.mission);
  if (!parsed.ok) return { statusCode: 400, headers: QUERY_HEADERS, body: parsed.message };
  return { statusCode: 200, headers: QUERY_HEADERS, body: ctx.catalog.query(parsed.filter) };
}
