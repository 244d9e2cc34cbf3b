import { BadResponseError, BusyError, ClientError, errorForStatus, errorText, NetworkError } from '../../src/client/client-errors.js';
import type { RetryPolicy } from '../../src/client/retry.js';
import { retryAfterMs } from '../../src/client/retry-after.js';
import { completeParts, sendParts, type PartCarrier } from '../../src/client/send-parts.js';
import { ApiError, DEFAULT_RETRY_S, NOT_NOW, refusalOf, serviceFetch, Unavailable } from './service-errors.js';

/**
 * The headers that say who is uploading (an API key, or the tab's sign-in), asked again before
 * each request: an upload in parts can outlast an access token, which is renewed meanwhile.
 */
export type CallerHeaders = () => Promise<Record<string, string>>;

/** Files from this size up go in parts (POST /uploads/{path}), as the SDK sends them. */
export const MULTIPART_THRESHOLD = 64 * 1024 * 1024;
/** Parts in flight at once, and attempts at each. */
const PARTS_AT_ONCE = 3;
const PART_ATTEMPTS = 3;

interface PutAnswer {
  readonly status: number;
  readonly text: string;
  readonly etag: string | null;
  readonly code: string | null;
}

/** PUTs bytes to a signed address, reporting bytes sent; resolves with the answer's status, text, ETag and X-Error-Code. */
function put(address: string, bytes: Blob, onSent: (bytes: number) => void, conditional: boolean): Promise<PutAnswer> {
  return new Promise((resolve, reject) => {
    // XMLHttpRequest, because fetch cannot report upload progress.
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', address);
    xhr.upload.addEventListener('progress', (e) => onSent(e.loaded));
    xhr.addEventListener('load', () =>
      resolve({ status: xhr.status, text: xhr.responseText, etag: xhr.getResponseHeader('ETag'), code: xhr.getResponseHeader('X-Error-Code') }),
    );
    // No answer from the store: an outage, not a refusal.
    xhr.addEventListener('error', () => reject(new Unavailable(DEFAULT_RETRY_S)));
    // Never replace a stored object (S3 conditional write; see docs/deploy.md).
    if (conditional) xhr.setRequestHeader('If-None-Match', '*');
    // No Content-Type, as the mission's own client sends the bytes.
    xhr.send(bytes.slice(0, bytes.size, ''));
  });
}

/** A store's refusal of a PUT as an ApiError (its text and code); 2xx passes. */
function checkPut(answer: PutAnswer): void {
  if (answer.status >= 200 && answer.status <= 299) return;
  if ([502, 503, 504].includes(answer.status)) throw new Unavailable(DEFAULT_RETRY_S, answer.status, answer.code ?? undefined);
  throw new ApiError(answer.status, answer.text.trim() || `the store answered ${answer.status}`, answer.code ?? undefined);
}

/** A request to the service that must succeed: a refusal throws (ApiError, or Unavailable when it is down). */
async function call(url: string, caller: CallerHeaders, init: RequestInit = {}): Promise<Response> {
  const res = await serviceFetch(url, { ...init, headers: { ...(await caller()), ...(init.headers as Record<string, string> | undefined) } });
  if (!res.ok) throw await refusalOf(res);
  return res;
}

/** Retries of a part, as the SDK makes them (retry.ts): two more attempts, never after a 4xx. */
const PART_RETRY: RetryPolicy = { retries: PART_ATTEMPTS - 1, baseDelayMs: 500, maxDelayMs: 4000, maxBusyWaitMs: 0 };

/** A request to the service inside the SDK's parts loop: a refusal throws the SDK's typed error, which says whether to retry. */
async function partCall(url: string, caller: CallerHeaders, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  const headers = { ...(await caller()), ...(init.headers as Record<string, string> | undefined) };
  try {
    res = await fetch(url, { ...init, headers });
  } catch (err) {
    throw new NetworkError(`${init.method ?? 'GET'} ${url.split('?')[0]!}: no answer`, undefined, { cause: err });
  }
  if (res.ok) return res;
  const code = res.headers.get('X-Error-Code') ?? undefined;
  const text = errorText(await res.text(), res.headers.get('content-type'));
  const wait = NOT_NOW.has(res.status) ? retryAfterMs(res.headers.get('Retry-After')) : undefined;
  if (wait !== undefined) throw new BusyError(text, res.status, wait, code);
  throw errorForStatus('upload', res.status, text, code);
}

/** The portal's carrier of parts for the SDK's loop (src/client/send-parts.ts): fetch, XHR and slices of the File. */
function partCarrier(path: string, id: string, file: File, caller: CallerHeaders): PartCarrier {
  return {
    async sendPart(partNumber, start, length, onSent) {
      const { parts } = (await (await partCall(`/uploads/${path}?uploadId=${id}&parts=${partNumber}`, caller)).json()) as { parts: { url: string }[] };
      let answer: PutAnswer;
      try {
        answer = await put(parts[0]!.url, file.slice(start, start + length), onSent, false);
      } catch (err) {
        throw new NetworkError(`part ${partNumber}: the store did not answer`, undefined, { cause: err });
      }
      if (answer.status < 200 || answer.status > 299) throw errorForStatus('transfer', answer.status, answer.text.trim() || `the store answered ${answer.status}`, answer.code ?? undefined);
      if (!answer.etag) throw new BadResponseError('the store answered without an ETag', answer.status);
      return answer.etag;
    },
    async complete(parts) {
      await partCall(`/uploads/${path}?uploadId=${id}`, caller, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ parts }) });
    },
  };
}

/** The SDK's error as the page's: "not now" (no answer, 429, 502-504) as Unavailable, any other refusal as ApiError. */
function asPageError(err: unknown): unknown {
  if (err instanceof NetworkError) return new Unavailable(DEFAULT_RETRY_S);
  if (!(err instanceof ClientError) || err.status === undefined) return err;
  if (NOT_NOW.has(err.status)) return new Unavailable(err instanceof BusyError ? Math.max(1, Math.ceil(err.waitMs / 1000)) : DEFAULT_RETRY_S, err.status, err.serverCode);
  return new ApiError(err.status, err.message, err.serverCode);
}

/**
 * Sends a large file in parts with the SDK's loop (src/client/send-parts.ts): opens the
 * upload, PUTs each part to a fresh signed address (`PARTS_AT_ONCE` at a time, each tried up
 * to `PART_ATTEMPTS` times), then completes it; a failed upload is dropped (DELETE). The
 * service never lets the completion replace a stored file (409).
 */
async function putInParts(path: string, file: File, caller: CallerHeaders, onProgress: (fraction: number) => void): Promise<void> {
  const open = (await (await call(`/uploads/${path}?size=${file.size}`, caller, { method: 'POST' })).json()) as { uploadId: string; partSize: number };
  const id = encodeURIComponent(open.uploadId);
  const upload = { path, uploadId: open.uploadId, size: file.size, partSize: open.partSize };
  const carrier = partCarrier(path, id, file, caller);
  let parts: { partNumber: number; etag: string }[];
  try {
    parts = await sendParts(upload, carrier, { retry: PART_RETRY, concurrency: PARTS_AT_ONCE, onProgress: (sent, size) => onProgress(sent / size) });
  } catch (err) {
    await caller()
      .then((headers) => fetch(`/uploads/${path}?uploadId=${id}`, { method: 'DELETE', headers }))
      .catch(() => undefined);
    throw asPageError(err);
  }
  try {
    await completeParts(carrier, parts, { retry: { ...PART_RETRY, retries: 0 } });
  } catch (err) {
    throw asPageError(err);
  }
}

/**
 * Stores one file at its path: GET /upload/{path} then a PUT to the signed address, or from
 * MULTIPART_THRESHOLD in parts. `onPhase` says what is under way; throws ApiError (the
 * service's or the store's refusal, 409 when the archive holds the name) or Unavailable.
 */
export async function sendFile(
  path: string,
  file: File,
  caller: CallerHeaders,
  onProgress: (fraction: number) => void,
  onPhase: (text: string) => void,
): Promise<void> {
  if (file.size >= MULTIPART_THRESHOLD) {
    onPhase('Uploading in parts…');
    await putInParts(path, file, caller, onProgress);
    return;
  }
  onPhase('Asking for an upload address…');
  const address = (await (await call(`/upload/${path}`, caller)).json()) as string;
  onPhase('Uploading…');
  checkPut(await put(address, file, (n) => onProgress(file.size === 0 ? 0 : n / file.size), true));
}
