import { createReadStream } from 'node:fs';
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { abortMultipart, completeMultipart, multipartAddresses, startMultipart, type OpenMultipart } from './api-calls.js';
import { BadResponseError, ConflictError, NotFoundError } from './client-errors.js';
import type { ClientContext, ProgressListener } from './client-context.js';
import { answerError, discard } from './http-transport.js';
import { withRetry } from './retry.js';
import { completeParts, partCount, partLength, sendParts, type PartCarrier } from './send-parts.js';

/** Files from this size up go in parts unless the caller says otherwise (64 MiB). */
export const DEFAULT_MULTIPART_THRESHOLD = 64 * 1024 * 1024;
/** Parts sent at once. */
export const DEFAULT_PART_CONCURRENCY = 4;

export interface MultipartOptions {
  readonly onProgress?: ProgressListener;
  /** Parts sent at once (default 4). */
  readonly concurrency?: number;
  /** Told when a part is stored (e.g. for a test to interrupt an upload). */
  readonly onPart?: (partNumber: number) => void;
  /** Aborts the upload between parts; the state file stays, so the next call resumes. */
  readonly signal?: AbortSignal;
  /** Told when an interrupted upload is taken up again: parts already stored, of all. */
  readonly onResume?: (partsStored: number, parts: number) => void;
  /** The file's SHA-256, declared at opening: completion refuses other bytes (docs/client.md, "Checked transfers"). */
  readonly sha256?: string;
}

/**
 * What is remembered of an upload in parts, in `.<file>.sdc-upload.json` beside the file:
 * enough to resume it after an interruption, and only for the same file (path, size, mtime).
 */
interface UploadState {
  /** The path asked for; `path`, the stored path the server answered. */
  readonly requestPath: string;
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly uploadId: string;
  readonly partSize: number;
}

export function stateFileOf(localFile: string): string {
  return join(dirname(localFile), `.${basename(localFile)}.sdc-upload.json`);
}

/**
 * Uploads a file in parts: POST /uploads/{path} opens the upload (or the state file beside
 * the file names one still open, whose stored parts the server lists and are skipped), parts
 * go `concurrency` at a time, each PUT to a fresh signed address and retried on its own, then
 * POST /uploads/{path}?uploadId= joins them. A completion whose answer was lost is recognised
 * by the stored file's SHA-256 (`storedCopyMatches`). The state file goes once the upload
 * completed or was refused. Undefined when the service offers no uploads in parts (the
 * caller then sends the file by one PUT).
 */
export async function uploadInParts(
  ctx: ClientContext,
  localFile: string,
  requestPath: string,
  storedCopyMatches: () => Promise<boolean>,
  options: MultipartOptions = {},
): Promise<{ path: string; size: number } | undefined> {
  const info = await stat(localFile);
  const size = info.size;
  const stateFile = stateFileOf(localFile);
  const saved = await readState(stateFile);
  let state = saved && saved.requestPath === requestPath && saved.size === size && saved.mtimeMs === info.mtimeMs ? saved : undefined;
  // The state of another version of the file: its upload is dropped, never resumed.
  if (saved && !state) await abortMultipart(ctx, saved.path, saved.uploadId).catch(() => undefined);
  let done = new Map<number, string>();
  if (state) {
    try {
      const { uploaded } = await withRetry(ctx.retry, () => multipartAddresses(ctx, state!.path, state!.uploadId, []), ctx.onRetry);
      done = new Map(uploaded.filter((p) => p.size === partLength(state!, p.partNumber)).map((p) => [p.partNumber, p.etag]));
    } catch (err) {
      // Completed, aborted or expired since: start over.
      if (!(err instanceof NotFoundError)) throw err;
      state = undefined;
    }
  }
  if (!state) {
    const open: OpenMultipart | undefined = await withRetry(ctx.retry, () => startMultipart(ctx, requestPath, size, options.sha256), ctx.onRetry);
    if (open === undefined) return undefined;
    if (Math.ceil(size / open.partSize) > open.maxParts) throw new BadResponseError(`the part size ${open.partSize} is too small for ${size} bytes`);
    state = { requestPath, path: open.path, size, mtimeMs: info.mtimeMs, uploadId: open.uploadId, partSize: open.partSize };
    // Without a state file (a read-only folder, say) the upload still goes; it just cannot resume.
    await writeState(stateFile, state).catch(() => undefined);
  }
  const current = state;
  const count = partCount(current);
  if (saved !== undefined && state === saved) options.onResume?.(done.size, count);

  const parts = await sendParts(current, carrier(ctx, current, localFile), {
    retry: ctx.retry,
    onRetry: ctx.onRetry,
    concurrency: options.concurrency ?? DEFAULT_PART_CONCURRENCY,
    done,
    onProgress: options.onProgress,
    onPart: options.onPart,
    signal: options.signal,
  });
  try {
    await completeParts(carrier(ctx, current, localFile), parts, { retry: ctx.retry, onRetry: ctx.onRetry, storedCopyMatches });
  } catch (err) {
    // Refused (the name is taken) or gone: nothing left to resume.
    if (err instanceof ConflictError || err instanceof NotFoundError) await unlink(stateFile).catch(() => undefined);
    throw err;
  }
  await unlink(stateFile).catch(() => undefined);
  return { path: current.path, size };
}

/** The SDK's carrier of parts: undici requests, bytes read from the file. */
function carrier(ctx: ClientContext, state: UploadState, localFile: string): PartCarrier {
  return {
    sendPart: (partNumber, start, length, onSent) => sendPart(ctx, state, localFile, partNumber, start, length, onSent),
    complete: async (parts) => void (await completeMultipart(ctx, state.path, state.uploadId, parts)),
  };
}

/** One attempt at one part: a fresh address, then a PUT of its bytes; the ETag answered. */
async function sendPart(ctx: ClientContext, state: UploadState, localFile: string, partNumber: number, start: number, length: number, onSent: (bytes: number) => void): Promise<string> {
  const { addresses } = await multipartAddresses(ctx, state.path, state.uploadId, [partNumber]);
  const address = addresses.get(partNumber);
  if (address === undefined) throw new BadResponseError(`no address for part ${partNumber}`);
  let sent = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      onSent(sent);
      done(null, chunk);
    },
  });
  const source = length === 0 ? undefined : createReadStream(localFile, { start, end: start + length - 1 });
  source?.on('error', (err) => meter.destroy(err));
  if (source) source.pipe(meter);
  else meter.end();
  const res = await ctx.transport.signed(address, { method: 'PUT', headers: { 'content-length': String(length) }, body: meter });
  if (res.statusCode >= 300) throw await answerError('transfer', res);
  const etag = res.headers.etag;
  await discard(res);
  if (typeof etag !== 'string' || etag === '') throw new BadResponseError(`the store answered part ${partNumber} without an ETag`);
  return etag;
}

async function readState(file: string): Promise<UploadState | undefined> {
  try {
    const state = JSON.parse(await readFile(file, 'utf8')) as Partial<UploadState>;
    const valid = typeof state.uploadId === 'string' && typeof state.path === 'string' && typeof state.partSize === 'number' && state.partSize > 0;
    return valid ? (state as UploadState) : undefined;
  } catch {
    return undefined;
  }
}

async function writeState(file: string, state: UploadState): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(state));
  await rename(temp, file);
}
