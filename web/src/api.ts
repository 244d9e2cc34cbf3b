import type { CoverageSpan } from '../../src/wire/coverage.js';
import type { WireRecord } from '../../src/wire/record.js';
import { ndjsonObjects } from './ndjson-stream.js';

/**
 * A record of GET /query: the wire record (src/wire/record.ts), whose archive fields this
 * service always sends; `uploader` only when a key was used.
 */
export type FileRecord = WireRecord & Required<Pick<WireRecord, 'ingestion_date' | 'size' | 'sha256'>>;

/** A span of GET /coverage (src/wire/coverage.ts). */
export type { CoverageSpan };

/** An answer the service refused, with its message for people. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The message of a refused request: JSON strings (query, upload) are decoded, text kept. */
export async function errorMessage(res: Response): Promise<string> {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'string') return value;
    } catch {
      // not JSON after all: show the text
    }
  }
  return text.trim() || `The service answered ${res.status} ${res.statusText}.`;
}

/** A record answer of GET /query: its headers, and its records as they stream in. */
export interface RecordsAnswer {
  readonly headers: Headers;
  readonly items: AsyncGenerator<FileRecord>;
}

/**
 * Asks GET /query for records as NDJSON, read line by line as they arrive; throws ApiError,
 * with the service's message, on a refusal.
 */
export async function fetchRecords(params: URLSearchParams, signal?: AbortSignal): Promise<RecordsAnswer> {
  const query = new URLSearchParams(params);
  query.set('format', 'ndjson');
  const res = await fetch(`/query?${query.toString()}`, { signal });
  if (!res.ok || !res.body) throw new ApiError(res.status, await errorMessage(res));
  return { headers: res.headers, items: ndjsonObjects<FileRecord>(res.body) };
}

/** Asks GET /coverage for its spans (one JSON array); throws ApiError, with the service's message, on a refusal. */
export async function fetchCoverage(params: URLSearchParams): Promise<CoverageSpan[]> {
  const query = params.toString();
  const res = await fetch(`/coverage${query ? `?${query}` : ''}`, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw new ApiError(res.status, await errorMessage(res));
  return (await res.json()) as CoverageSpan[];
}
