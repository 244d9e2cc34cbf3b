import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { link, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectTooLargeError } from '../object-store.js';

/**
 * The pieces of the local store's atomic write pipeline (a temporary file, hashed and fsynced,
 * then linked to its name), shared by single PUTs (local-object-store.ts) and uploads in parts
 * (local-multipart.ts).
 */

/** Prefix of in-progress uploads; never a valid stored name, so never listed or served. */
export const TEMP_PREFIX = '.upload-';

/** A fresh temporary file name in `dir`, in the same folder as its final name (so a link or rename never crosses file systems). */
export function tempFileIn(dir: string): string {
  return join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}.part`);
}

/**
 * Bytes a write may hold before it asks its source to wait. With the default 16 KiB each
 * socket chunk became a write of its own; 1 MiB lets chunks that arrive while a write is
 * in flight go to the disk together (one writev), as the minimal handlers of bench/ do.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/** A new temporary file (never an existing one: `wx`) for a pipeline to write into. */
export function tempFileWriter(temp: string): WriteStream {
  return createWriteStream(temp, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES });
}

/**
 * A pass-through that counts and hashes the bytes on their way to the disk, and fails the
 * pipeline (ObjectTooLargeError) at the first byte past `limit`.
 */
export function meteredDigest(limit: number): { readonly meter: Transform; digest(): { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    highWaterMark: WRITE_BUFFER_BYTES,
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) return done(new ObjectTooLargeError(limit));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { meter, digest: () => ({ size, sha256: hash.digest('hex') }) };
}

export interface Detachable {
  readonly stream: PassThrough;
  /** True once the source failed or ended early (the client left mid-body): not the disk's doing. */
  sourceFailed(): boolean;
  detach(): void;
}

/**
 * The source piped into a stream of our own. pipeline() destroys its source on any
 * error, and destroying a request destroys its socket before a 413 could be sent; so
 * pipeline gets this stream, and the request is only unpiped (then answered, and its
 * connection closed). A source that ends early (aborted, errored, closed before its
 * end, now or already) fails the stream.
 */
export function detachable(source: Readable): Detachable {
  const stream = new PassThrough();
  // The stream may fail while the write still awaits (before pipeline listens): never an unhandled 'error'.
  stream.on('error', () => undefined);
  let failed = false;
  const fail = (err?: Error) => {
    failed = true;
    if (!stream.destroyed) stream.destroy(err ?? new Error('the upload was interrupted before its end'));
  };
  const onClose = () => {
    if (!source.readableEnded) fail();
  };
  const onAborted = () => fail();
  source.on('error', fail);
  source.on('close', onClose);
  // An http.IncomingMessage whose client went away before its end.
  source.on('aborted', onAborted);
  if (source.readableAborted || source.errored || (source as { aborted?: boolean }).aborted === true) fail(source.errored ?? undefined);
  else source.pipe(stream);
  return {
    stream,
    sourceFailed: () => failed,
    detach() {
      source.unpipe(stream);
      source.off('close', onClose);
      source.off('aborted', onAborted);
      // Keep one listener so a late socket error on the request is not an unhandled 'error'.
      source.off('error', fail);
      source.on('error', () => undefined);
    },
  };
}

/** Flushes a file's bytes to the disk before it is linked under its name. */
export async function fsync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `source`'s bytes into the fresh file `temp`, counted and hashed on the way (past `limit`: ObjectTooLargeError). */
export async function writeHashed(source: Readable | AsyncIterable<Buffer>, temp: string, limit: number): Promise<{ size: number; sha256: string }> {
  const { meter, digest } = meteredDigest(limit);
  await pipeline(source, meter, tempFileWriter(temp));
  return digest();
}

/**
 * Puts the fsynced file `temp` under `target` if that name is free: `link` never replaces a
 * file, so of racing writers exactly one wins; then the folder is fsynced, so the name
 * survives a crash. False when the name was taken.
 */
export async function linkIfFree(temp: string, target: string): Promise<boolean> {
  try {
    await link(temp, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  await fsync(dirname(target));
  return true;
}
