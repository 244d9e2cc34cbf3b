import type { CoverageSpan } from '../../src/wire/coverage.js';
import type { WireRecord } from '../../src/wire/record.js';
import { jsonArrayObjects } from './json-array-stream.js';

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

/** A JSON array answer of `path?params`: its headers, and its objects as they stream in. */
export interface ArrayAnswer<T> {
  readonly headers: Headers;
  readonly items: AsyncGenerator<T>;
}

/** Asks for a JSON array answer; throws ApiError, with the service's message, on a refusal. */
export async function fetchArray<T>(path: string, params: URLSearchParams, signal?: AbortSignal): Promise<ArrayAnswer<T>> {
  const query = params.toString();
  const res = await fetch(`${path}${query ? `?${query}` : ''}`, { signal, headers: { Accept: 'application/json' } });
  if (!res.ok || !res.body) throw new ApiError(res.status, await errorMessage(res));
  return { headers: res.headers, items: jsonArrayObjects<T>(res.body) };
}
