import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { pipeline, Transform, type Readable } from 'node:stream';
import { requestUploadAddress } from './api-calls.js';
import { ConflictError, ContentConflictError, LocalFileError } from './client-errors.js';
import type { ClientContext, ProgressListener } from './client-context.js';
import { uploadTarget } from './data-dir-paths.js';
import { sha256File } from './file-digest.js';
import { answerError, discard } from './http-transport.js';
import { DEFAULT_MULTIPART_THRESHOLD, uploadInParts } from './multipart-upload.js';
import { findRecord } from './query-records.js';
import { withRetry } from './retry.js';

export interface UploadOptions {
  /** The local mirror of the archive; the file's path under it is its path in the archive. */
  readonly dataDir: string;
  readonly onProgress?: ProgressListener;
  /**
   * Files of this size or more go in parts (POST /uploads/{path}): parallel, each part
   * retried alone, resumed after an interruption. Default 64 MiB; Infinity: never.
   */
  readonly multipartThreshold?: number;
  /** Parts sent at once (default 4). */
  readonly partConcurrency?: number;
  /** Told when an interrupted upload in parts is resumed: parts already stored, of all. */
  readonly onResume?: (partsStored: number, parts: number) => void;
}

export interface UploadResult {
  /** Where the archive keeps the file. */
  readonly path: string;
  readonly size: number;
  /**
   * `already archived`: the archive held this name with these very bytes (same SHA-256)
   * before this call; nothing was sent. A re-run of an upload is therefore harmless.
   */
  readonly status: 'uploaded' | 'already archived';
}

/**
 * Uploads one file (docs/api.md, The three endpoints): local checks first (no request for a file the
 * server would refuse by name), then GET /upload for a signed address and a streamed PUT
 * of the bytes. A network failure or 5xx starts again with a fresh address. If a retry
 * meets 409 after a PUT that may have landed, the archive's SHA-256 decides whether
 * the earlier attempt in fact stored this very file. Files from `multipartThreshold` up
 * go in parts instead (multipart-upload.ts).
 *
 * A name already archived is no failure when the archive's SHA-256 is the local file's
 * (`status: 'already archived'`); with other bytes it is a ContentConflictError.
 */
export async function uploadFile(ctx: ClientContext, localFile: string, options: UploadOptions): Promise<UploadResult> {
  const target = uploadTarget(localFile, options.dataDir, ctx.mission);
  const size = await fileSize(localFile);
  try {
    return await sendFile(ctx, localFile, target, size, options);
  } catch (err) {
    if (!(err instanceof ConflictError) || err instanceof ContentConflictError) throw err;
    const record = await findRecord(ctx, target.storedPath);
    // No record: the 409 was another upload of the name under way, not an archived file.
    if (record === undefined) throw err;
    const local = await sha256File(localFile);
    if (record.sha256 === local) return { path: target.storedPath, size, status: 'already archived' };
    throw new ContentConflictError(target.storedPath, local, record.sha256);
  }
}

async function sendFile(
  ctx: ClientContext,
  localFile: string,
  target: { requestPath: string; storedPath: string },
  size: number,
  options: UploadOptions,
): Promise<UploadResult> {
  // Hashed first, and declared: the store refuses other bytes (docs/client.md, "Checked transfers").
  // A small file is read once, for its digest and its PUT (and its retries) alike.
  const whole = size <= READ_WHOLE_BYTES ? await readWhole(localFile, size) : undefined;
  const sha256 = whole !== undefined ? createHash('sha256').update(whole).digest('hex') : await sha256File(localFile);
  if (size > 0 && size >= (options.multipartThreshold ?? DEFAULT_MULTIPART_THRESHOLD)) {
    const result = await uploadInParts(ctx, localFile, target.requestPath, () => storedCopyMatches(ctx, target.storedPath, localFile), {
      onProgress: options.onProgress,
      concurrency: options.partConcurrency,
      onResume: options.onResume,
      sha256,
    });
    if (result) return { path: result.path, size, status: 'uploaded' };
  }
  let putSent = false;
  await withRetry(
    ctx.retry,
    async () => {
      let address: string;
      try {
        address = await requestUploadAddress(ctx, target.requestPath, sha256);
      } catch (err) {
        if (err instanceof ConflictError && putSent && (await storedCopyMatches(ctx, target.storedPath, localFile))) return;
        throw err;
      }
      putSent = true;
      const res = await ctx.transport.signed(address, {
        method: 'PUT',
        // No Content-Type, as the mission's client sends it: signed addresses do not cover one.
        // Content-Length is required by S3 (no chunked uploads to a presigned PUT).
        // If-None-Match: * makes the store refuse to replace an object (S3 conditional write;
        // required by an S3 store configured with conditionalPut=required, see docs/deploy.md).
        // x-amz-checksum-sha256 when an S3 address signed it in: the store then checks the bytes too.
        headers: { 'content-length': String(size), 'if-none-match': '*', ...checksumHeader(address, sha256) },
        body: whole !== undefined ? metered(whole, options.onProgress) : meteredFile(localFile, size, options.onProgress),
      });
      if (res.statusCode >= 300) throw await answerError('transfer', res);
      await discard(res);
    },
    ctx.onRetry,
  );
  return { path: target.storedPath, size, status: 'uploaded' };
}

async function fileSize(file: string): Promise<number> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new LocalFileError(`${file} is not a regular file.`);
    return info.size;
  } catch (err) {
    if (err instanceof LocalFileError) throw err;
    throw new LocalFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * Files up to this size are read whole and sent as one buffer: one read, no stream, no meter
 * per file. For a few KiB that is most of the client's work per file (bench/client-scale.ts,
 * docs/performance.md "Clients at scale"); progress then jumps from 0 to the whole file.
 */
const READ_WHOLE_BYTES = 64 * 1024;

/** The `x-amz-checksum-sha256` header an S3 upload address bound to a digest signs in (docs/api.md, "Checked transfers"). */
function checksumHeader(address: string, sha256: string): Record<string, string> {
  const signed = /[?&]X-Amz-SignedHeaders=([^&]*)/.exec(address)?.[1];
  return signed !== undefined && decodeURIComponent(signed).split(';').includes('x-amz-checksum-sha256')
    ? { 'x-amz-checksum-sha256': Buffer.from(sha256, 'hex').toString('base64') }
    : {};
}

/** A small file's bytes, read once (READ_WHOLE_BYTES). */
async function readWhole(file: string, size: number): Promise<Buffer> {
  const bytes = await readFile(file);
  if (bytes.length !== size) throw new LocalFileError(`${file} changed while it was being uploaded (${size} bytes, now ${bytes.length}); upload it again.`);
  return bytes;
}

/** Bytes read whole, sent as one buffer: progress jumps from 0 to the whole. */
function metered(bytes: Buffer, onProgress: ProgressListener | undefined): Buffer {
  onProgress?.(0, bytes.length);
  onProgress?.(bytes.length, bytes.length);
  return bytes;
}

/**
 * A larger file's bytes, streamed, reporting progress as they go out. Bytes that changed since
 * they were hashed are refused by the store (the address is bound to the digest).
 */
function meteredFile(file: string, size: number, onProgress: ProgressListener | undefined): Readable {
  onProgress?.(0, size);
  let sent = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      onProgress?.(sent, size);
      done(null, chunk);
    },
  });
  return pipeline(createReadStream(file), meter, () => undefined);
}

async function storedCopyMatches(ctx: ClientContext, path: string, localFile: string): Promise<boolean> {
  const record = await findRecord(ctx, path);
  return record?.sha256 !== undefined && record.sha256 === (await sha256File(localFile));
}
