import { ANONYMOUS, recordAudience, releaseScope, type Caller } from './visibility.js';
import { parseQueryFilter } from '../catalog/index.js';
import { QUERY_FILTERS } from '../wire/query.js';
import { coverageSpans } from './coverage-spans.js';
import { INVALID_COVERAGE_PARAMETER, INVALID_QUERY } from '../errors/index.js';
import { failure, QUERY_HEADERS, type Envelope } from './envelope.js';
import type { ServiceContext } from './service-context.js';

/** Everything /coverage takes: the filters of /query; what shapes its answer (pages, order, format) means nothing for spans. */
const COVERAGE_PARAMETERS: readonly string[] = QUERY_FILTERS;

/**
 * GET /coverage: what the archive holds, as spans of consecutive covered days per
 * instrument and data level, for the files a /query with the same filters returns.
 * Same filters, messages and headers as /query; spans stream out ordered by
 * instrument, data level and start date.
 */
export function coverage(ctx: ServiceContext, pairs: Iterable<readonly [string, string]>, caller: Caller = ANONYMOUS): Envelope {
  const list = [...pairs];
  const unknown = list.find(([name]) => !COVERAGE_PARAMETERS.includes(name));
  if (unknown) {
    return failure(INVALID_COVERAGE_PARAMETER.create(unknown[0], COVERAGE_PARAMETERS), QUERY_HEADERS);
  }
  const parsed = parseQueryFilter(list, ctx.mission);
  if (!parsed.ok) return failure(INVALID_QUERY.create(parsed.message), QUERY_HEADERS);
  return { statusCode: 200, headers: QUERY_HEADERS, body: coverageSpans(ctx.catalog.coverage({ ...parsed.filter, audience: recordAudience(ctx, caller), releases: releaseScope(ctx, caller) })) };
}
