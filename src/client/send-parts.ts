// No Node import here: the portal bundles this module (web/build.js) and sends its large files with it.
import { runPool } from '../concurrency/run-pool.js';
import { ConflictError, NotFoundError } from './client-errors.js';
import { withRetry, type RetryListener, type RetryPolicy } from './retry.js';

/** An open upload in parts (POST /uploads/{path}): where, which, and how it is cut. */
export interface OpenUpload {
  readonly path: string;
  readonly uploadId: string;
  readonly size: number;
  readonly partSize: number;
}

/** How one client moves bytes: the SDK with undici and files, the portal with fetch, XHR and a File. */
export interface PartCarrier {
  /** One attempt at one part (a fresh signed address, then a PUT of `length` bytes from `start`): its ETag. */
  sendPart(partNumber: number, start: number, length: number, onSent: (bytes: number) => void): Promise<string>;
  /** POST /uploads/{path}?uploadId=: joins the parts. */
  complete(parts: readonly { partNumber: number; etag: string }[]): Promise<void>;
}

export interface SendPartsOptions {
  readonly retry: RetryPolicy;
  readonly onRetry?: RetryListener;
  /** Parts sent at once. */
  readonly concurrency: number;
  /** Parts already stored (a resumed upload), by number: their ETags. */
  readonly done?: ReadonlyMap<number, string>;
  readonly onProgress?: (sent: number, size: number) => void;
  /** Told when a part is stored. */
  readonly onPart?: (partNumber: number) => void;
  /** Stops taking parts; the upload stays open. */
  readonly signal?: AbortSignal;
  /** Whether the archive holds this file already: a completion whose answer was lost, recognised. */
  readonly storedCopyMatches?: () => Promise<boolean>;
}

/** Bytes of part `partNumber` (from 1). */
export function partLength(upload: Pick<OpenUpload, 'size' | 'partSize'>, partNumber: number): number {
  const start = (partNumber - 1) * upload.partSize;
  return Math.max(0, Math.min(upload.partSize, upload.size - start));
}

/** Parts of an upload: at least one, an empty file's. */
export function partCount(upload: Pick<OpenUpload, 'size' | 'partSize'>): number {
  return Math.max(1, Math.ceil(upload.size / upload.partSize));
}

/**
 * Sends the parts not yet stored, `concurrency` at a time (the one pool, src/concurrency),
 * each retried on its own (retry.ts), reporting bytes of finished parts plus those in flight;
 * then completes the upload (completeParts). The parts in order, with their ETags.
 */
export async function sendParts(upload: OpenUpload, carrier: PartCarrier, options: SendPartsOptions): Promise<{ partNumber: number; etag: string }[]> {
  const done = new Map(options.done ?? []);
  const inFlight = new Map<number, number>();
  let finished = [...done.keys()].reduce((sum, n) => sum + partLength(upload, n), 0);
  const report = () => options.onProgress?.(finished + [...inFlight.values()].reduce((a, b) => a + b, 0), upload.size);
  report();

  const todo = Array.from({ length: partCount(upload) }, (_, i) => i + 1).filter((n) => !done.has(n));
  await runPool(todo, options.concurrency, async (partNumber) => {
    options.signal?.throwIfAborted();
    const etag = await withRetry(
      options.retry,
      async () => {
        inFlight.set(partNumber, 0);
        try {
          return await carrier.sendPart(partNumber, (partNumber - 1) * upload.partSize, partLength(upload, partNumber), (sent) => {
            inFlight.set(partNumber, sent);
            report();
          });
        } finally {
          inFlight.delete(partNumber);
        }
      },
      options.onRetry,
    );
    done.set(partNumber, etag);
    finished += partLength(upload, partNumber);
    report();
    options.onPart?.(partNumber);
  });
  options.signal?.throwIfAborted();

  return [...done.entries()].sort((a, b) => a[0] - b[0]).map(([partNumber, etag]) => ({ partNumber, etag }));
}

/**
 * Joins the parts (retried). A completion refused (409/404) after an attempt that may have
 * landed is no failure when `storedCopyMatches` finds the file archived.
 */
export async function completeParts(
  carrier: PartCarrier,
  parts: readonly { partNumber: number; etag: string }[],
  options: Pick<SendPartsOptions, 'retry' | 'onRetry' | 'storedCopyMatches'>,
): Promise<void> {
  let sent = false;
  await withRetry(
    options.retry,
    async () => {
      try {
        sent = true;
        await carrier.complete(parts);
      } catch (err) {
        // An earlier attempt may have completed it, its answer lost: then the file is ours.
        if (sent && (err instanceof ConflictError || err instanceof NotFoundError) && options.storedCopyMatches && (await options.storedCopyMatches())) return;
        throw err;
      }
    },
    options.onRetry,
  );
}
