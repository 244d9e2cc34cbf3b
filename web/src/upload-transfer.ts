import { ApiError, DEFAULT_RETRY_S, refusalOf, serviceFetch, Unavailable } from './service-errors.js';

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
async function call(url: string, headers: Record<string, string>, init: RequestInit = {}): Promise<Response> {
  const res = await serviceFetch(url, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
  if (!res.ok) throw await refusalOf(res);
  return res;
}

/**
 * Sends a large file in parts: opens the upload, PUTs each part to a fresh signed address
 * (`PARTS_AT_ONCE` at a time, each tried up to `PART_ATTEMPTS` times), then completes it.
 * The service never lets the completion replace a stored file (409).
 */
async function putInParts(path: string, file: File, headers: Record<string, string>, onProgress: (fraction: number) => void): Promise<void> {
  const open = (await (await call(`/uploads/${path}?size=${file.size}`, headers, { method: 'POST' })).json()) as { uploadId: string; partSize: number };
  const id = encodeURIComponent(open.uploadId);
  const count = Math.ceil(file.size / open.partSize);
  const sent = new Array<number>(count).fill(0);
  const etags = new Array<string>(count);
  const report = () => onProgress(sent.reduce((a, b) => a + b, 0) / file.size);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const bytes = file.slice(i * open.partSize, Math.min(file.size, (i + 1) * open.partSize));
      for (let attempt = 1; ; attempt++) {
        try {
          const { parts } = (await (await call(`/uploads/${path}?uploadId=${id}&parts=${i + 1}`, headers)).json()) as { parts: { url: string }[] };
          const answer = await put(parts[0]!.url, bytes, (n) => ((sent[i] = n), report()), false);
          checkPut(answer);
          if (!answer.etag) throw new ApiError(answer.status, 'the store answered without an ETag');
          etags[i] = answer.etag;
          sent[i] = bytes.size;
          report();
          break;
        } catch (err) {
          sent[i] = 0;
          const status = err instanceof ApiError ? err.status : 0;
          if (attempt >= PART_ATTEMPTS || (status >= 400 && status < 500)) throw err;
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARTS_AT_ONCE, count) }, worker));
  } catch (err) {
    await fetch(`/uploads/${path}?uploadId=${id}`, { method: 'DELETE', headers }).catch(() => undefined);
    throw err;
  }
  await call(`/uploads/${path}?uploadId=${id}`, headers, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ parts: etags.map((etag, i) => ({ partNumber: i + 1, etag })) }),
  });
}

/**
 * Stores one file at its path: GET /upload/{path} then a PUT to the signed address, or from
 * MULTIPART_THRESHOLD in parts. `onPhase` says what is under way; throws ApiError (the
 * service's or the store's refusal, 409 when the archive holds the name) or Unavailable.
 */
export async function sendFile(
  path: string,
  file: File,
  headers: Record<string, string>,
  onProgress: (fraction: number) => void,
  onPhase: (text: string) => void,
): Promise<void> {
  if (file.size >= MULTIPART_THRESHOLD) {
    onPhase('Uploading in parts…');
    await putInParts(path, file, headers, onProgress);
    return;
  }
  onPhase('Asking for an upload address…');
  const address = (await (await call(`/upload/${path}`, headers)).json()) as string;
  onPhase('Uploading…');
  checkPut(await put(address, file, (n) => onProgress(file.size === 0 ? 0 : n / file.size), true));
}
