import type { CoverageSpan } from '../../src/wire/coverage.js';
import type { WireRecord } from '../../src/wire/record.js';
import type { ReleaseSummary } from '../../src/wire/release.js';
import { ndjsonObjects } from './ndjson-stream.js';
import { serviceFetch, refusalOf } from './service-errors.js';
import { signInHeaders } from './sign-in-session.js';

export { ApiError, Unavailable, plainFailure } from './service-errors.js';

/**
 * A record of GET /query: the wire record (src/wire/record.ts), whose archive fields this
 * service always sends; `uploader` only when a key or a sign-in was used.
 */
export type FileRecord = WireRecord & Required<Pick<WireRecord, 'ingestion_date' | 'size' | 'sha256'>>;

/** A span of GET /coverage (src/wire/coverage.ts). */
export type { CoverageSpan };

/** A record answer of GET /query: its headers, and its records as they stream in. */
export interface RecordsAnswer {
  readonly headers: Headers;
  readonly items: AsyncGenerator<FileRecord>;
}

/**
 * Asks GET /query for records as NDJSON, read line by line as they arrive; throws ApiError,
 * with the service's message, on a refusal, and Unavailable when the service cannot answer.
 */
export async function fetchRecords(params: URLSearchParams, signal?: AbortSignal): Promise<RecordsAnswer> {
  const query = new URLSearchParams(params);
  query.set('format', 'ndjson');
  const res = await serviceFetch(`/query?${query.toString()}`, { signal, headers: await signInHeaders() });
  if (!res.ok || !res.body) throw await refusalOf(res);
  return { headers: res.headers, items: ndjsonObjects<FileRecord>(res.body) };
}

/** Asks GET /coverage for its spans (one JSON array); throws as fetchRecords does. */
export async function fetchCoverage(params: URLSearchParams): Promise<CoverageSpan[]> {
  const query = params.toString();
  const res = await serviceFetch(`/coverage${query ? `?${query}` : ''}`, { headers: { Accept: 'application/json', ...(await signInHeaders()) } });
  if (!res.ok) throw await refusalOf(res);
  return (await res.json()) as CoverageSpan[];
}

/** Asks GET /releases for the releases this caller may see (one JSON array); throws as fetchRecords does. */
export async function fetchReleases(): Promise<ReleaseSummary[]> {
  const res = await serviceFetch('/releases', { headers: { Accept: 'application/json', ...(await signInHeaders()) } });
  if (!res.ok) throw await refusalOf(res);
  return (await res.json()) as ReleaseSummary[];
}
