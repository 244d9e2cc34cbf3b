import { Negotiator } from '@fastify/accept-negotiator';
import { DEFAULT_SORT, encodeCursor, parseQueryFilter, positionOf, type FileRecord, type QueryFormat } from '../catalog/index.js';
import { INVALID_QUERY, NOTHING_TO_LIST } from '../errors/index.js';
import { failure, QUERY_HEADERS, type Envelope } from './envelope.js';
import { METALINK_FILE_NAME, metalinkDocument } from './metalink.js';
import { MEDIA_TYPES } from './record-formats.js';
import type { ServiceContext } from './service-context.js';
import { ANONYMOUS, recordAudience, releaseScope, type Caller } from './visibility.js';

/** What the transport knows of the request beyond its parameters. */
export interface QueryRequestInfo {
  /** The Accept header, to choose a representation when `format` is absent. */
  readonly accept?: string;
  /** The request's address (absolute under the public URL, or path-relative), to build the `Link` to the next page. */
  readonly url?: string;
  /** Who asks (visibility.ts): a caller without a key sees released files only. */
  readonly caller?: Caller;
}

/**
 * GET /query (docs/api.md, The three endpoints): records matching the filter, ordered by file_path
 * (or `sort`), streamed a page at a time; 400 with a message for anything malformed.
 * Records carry the spec's fields (2.3) first, then ingestion_date, size and sha256.
 * With `limit`, one page is answered, with X-Total-Count and a Link to the next page.
 * `format=metalink` answers the same records (the same page) as a Metalink document.
 */
export async function query(
  ctx: ServiceContext,
  pairs: Iterable<readonly [string, string]>,
  info: QueryRequestInfo = {},
): Promise<Envelope> {
  const parsed = parseQueryFilter(pairs, ctx.mission);
  if (!parsed.ok) return failure(INVALID_QUERY.create(parsed.message), QUERY_HEADERS);
  const { options } = parsed;
  const caller = info.caller ?? ANONYMOUS;
  const filter = { ...parsed.filter, audience: recordAudience(ctx, caller), releases: releaseScope(ctx, caller) };
  const format = parsed.format ?? formatFromAccept(info.accept);
  // A Metalink hands out signed addresses, which need no key: withdrawn files are never in one
  // (their bytes are for curators only: docs/api.md "Withdrawn files").
  if (format === 'metalink' && filter.status !== undefined) {
    return failure(INVALID_QUERY.create('format=metalink lists archived files only (withdrawn files are never offered for download); leave status out.'), QUERY_HEADERS);
  }
  const headers: Record<string, string> = { ...QUERY_HEADERS, 'Content-Type': MEDIA_TYPES[format] };
  // A browser following the portal's link saves the document rather than showing it.
  if (format === 'metalink') headers['Content-Disposition'] = `attachment; filename="${METALINK_FILE_NAME}"`;
  const answer = (records: AsyncIterable<FileRecord>): Envelope | Promise<Envelope> =>
    format !== 'metalink'
      ? { statusCode: 200, headers, body: records }
      : metalinkDocument(ctx, records, caller).then((document) =>
          document ? { statusCode: 200, headers, body: document } : failure(NOTHING_TO_LIST.create(), QUERY_HEADERS),
        );
  if (options.limit === undefined) return answer(ctx.catalog.query(filter, options));

  // The count and the page at once (on SQLite each on a reading thread of its own).
  const total = ctx.catalog.count(filter);
  total.catch(() => undefined); // awaited below, unless the page fails first
  // One page, held to learn whether another follows: bounded by MAX_PAGE_LIMIT.
  const page: FileRecord[] = [];
  for await (const record of ctx.catalog.query(filter, { ...options, limit: options.limit + 1 })) page.push(record);
  headers['X-Total-Count'] = String(await total);
  if (page.length > options.limit) {
    page.length = options.limit;
    const sort = options.sort ?? DEFAULT_SORT;
    const cursor = encodeCursor(sort, positionOf(page[page.length - 1]!, sort));
    headers['X-Next-Cursor'] = cursor;
    headers.Link = `<${nextPageUrl(info.url, cursor)}>; rel="next"`;
  }
  return answer(iterate(page));
}

/** Media types `Accept` may name, in the order that wins among equal qualities. */
const ACCEPTED: Readonly<Record<string, QueryFormat>> = Object.freeze({
  'text/csv': 'csv',
  'application/ndjson': 'ndjson',
  'application/x-ndjson': 'ndjson',
  'application/json': 'json',
  'application/metalink4+xml': 'metalink',
});
const acceptNegotiator = new Negotiator({ supportedValues: Object.keys(ACCEPTED) });

/**
 * The representation `Accept` prefers, by quality (`q=0` refuses one); JSON when it names
 * none of ours (`*\/*`, a browser's list). Parameters other than `q` (`charset=...`) are
 * dropped first: the negotiator reads every parameter as a quality.
 */
function formatFromAccept(accept: string | undefined): QueryFormat {
  if (!accept) return 'json';
  const ranges = accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((part) => part.trim());
    const quality = params.find((p) => /^q=/i.test(p));
    return quality ? `${type};${quality.toLowerCase()}` : type;
  });
  // A bare `*` is no media range; the negotiator would take it as its first choice.
  const chosen = acceptNegotiator.negotiate(ranges.filter((range) => !/^\*(;|$)/.test(range)).join(','));
  return (chosen === null ? undefined : ACCEPTED[chosen]) ?? 'json';
}

/** The same request with `cursor` set: absolute when `url` is, else relative (`?...` when unknown). */
function nextPageUrl(url: string | undefined, cursor: string): string {
  const u = new URL(url ?? '/query', 'http://relative.invalid');
  u.searchParams.set('cursor', cursor);
  if (url === undefined) return u.search;
  return /^https?:\/\//i.test(url) ? u.toString() : `${u.pathname}${u.search}`;
}

async function* iterate<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
