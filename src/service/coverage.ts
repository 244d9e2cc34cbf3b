import { parseQueryFilter } from '../catalog/index.js';
import { coverageSpans } from './coverage-spans.js';
import { QUERY_HEADERS, type Envelope } from './envelope.js';
import type { ServiceContext } from './service-context.js';

/**
 * GET /coverage: what the archive holds, as spans of consecutive covered days per
 * instrument and data level, for the files a /query with the same parameters would
 * return. Same parameters, same 400 messages and headers as /query; spans stream out
 * ordered by instrument, data level and start date.
 */
export function coverage(ctx: ServiceContext, pairs: Iterable<readonly [string, string]>): Envelope {
  const parsed = parseQueryFilter(pairs, ctx.mission);
  if (!parsed.ok) return { statusCode: 400, headers: QUERY_HEADERS, body: parsed.message };
  return { statusCode: 200, headers: QUERY_HEADERS, body: coverageSpans(ctx.catalog.coverage(parsed.filter)) };
}
