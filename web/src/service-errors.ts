/**
 * How the page tells a refusal (the service answered no, with a message for people) from an
 * outage (no answer, or 502-504 / 429: try later), and the plain words it shows for each.
 * docs/api.md lists the codes (X-Error-Code) and when Retry-After comes with them.
 */

/** An answer the service refused, with its message for people and its X-Error-Code. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(readonly status: number, message: string, readonly code?: string) {
    super(message);
  }
}

/** The service could not be reached, or said it cannot serve now; `retryAfter` in seconds. */
export class Unavailable extends Error {
  override name = 'Unavailable';
  constructor(readonly retryAfter: number, readonly status?: number, readonly code?: string) {
    super(status === 429 ? 'too many requests' : 'the archive cannot be reached');
  }
}

/** The wait to suggest when the service gave none (no answer at all, or no Retry-After). */
export const DEFAULT_RETRY_S = 10;

/** Statuses that mean "not now" rather than "no": a gateway or the service itself is down or busy. */
const NOT_NOW = new Set([429, 502, 503, 504]);

/** Retry-After as seconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); none or nonsense: the default. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number {
  if (header === null || header.trim() === '') return DEFAULT_RETRY_S;
  if (/^\d+$/.test(header.trim())) return Math.max(1, Number(header.trim()));
  const at = Date.parse(header);
  return Number.isNaN(at) ? DEFAULT_RETRY_S : Math.max(1, Math.ceil((at - now) / 1000));
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

/** The error a non-2xx answer stands for: Unavailable for "not now", else ApiError with the service's words. */
export async function refusalOf(res: Response): Promise<ApiError | Unavailable> {
  const code = res.headers.get('X-Error-Code') ?? undefined;
  if (NOT_NOW.has(res.status)) {
    await res.body?.cancel().catch(() => undefined);
    return new Unavailable(retryAfterSeconds(res.headers.get('Retry-After')), res.status, code);
  }
  return new ApiError(res.status, await errorMessage(res), code);
}

/** fetch, where "no answer" (refused, reset, offline: a TypeError) becomes Unavailable; an abort stays an abort. */
export async function serviceFetch(input: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (err) {
    if (err instanceof TypeError && !init?.signal?.aborted) throw new Unavailable(DEFAULT_RETRY_S);
    throw err;
  }
}

/** Plain words for an outage, never a raw error: what happened and when to try again. */
export function plainFailure(err: Unavailable): string {
  return err.status === 429
    ? `The archive is answering too many requests from here right now; try again in ${err.retryAfter} s.`
    : `The archive cannot be reached right now; try again in ${err.retryAfter} s.`;
}
