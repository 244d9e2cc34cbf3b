import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { FileRecord } from '../catalog/index.js';
import { FILE_NOT_FOUND, FILE_UNREADABLE, NOT_A_REGULAR_FILE, PRECONDITION_FAILED, raise, RANGE_NOT_SATISFIABLE, ServerError } from '../errors/index.js';
import { exampleStoredPath, type MissionConfig } from '../mission/index.js';
import type { LocalObjectStore } from '../store/index.js';
import { storedMediaType } from '../wire/media-type.js';
import { conditionalAnswer } from './conditional-requests.js';
import { sendError } from './error-answer.js';

/** RFC 9530's Repr-Digest of bytes whose SHA-256 is `hex`. */
export function reprDigest(hex: string): string {
  return `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`;
}

/** 256 KiB reads: fewer, larger chunks than the 64 KiB default, still small per download. */
const READ_CHUNK = 256 * 1024;

/**
 * A local store's GET or HEAD of a stored file (docs/api.md, "Checked transfers"): the file is
 * opened first, without blocking and only if it is a regular file (a FIFO or device planted in
 * the store is refused, SDC_NOT_A_REGULAR_FILE: store/local/regular-file.ts), and every answer
 * is decided on that open file: conditional headers and Range (conditional-requests.ts), then
 * its bytes streamed from the same handle. With a record: a strong ETag that is its SHA-256
 * and `Repr-Digest` (the whole file's, on a 206 too). Without one (a crash between the store's
 * write and the catalog's, until reconcile indexes it) neither: nothing true could be said of
 * the bytes without reading them.
 */
export async function replyWithStoredFile(
  request: FastifyRequest,
  reply: FastifyReply,
  store: LocalObjectStore,
  mission: MissionConfig,
  key: string,
  record: FileRecord | undefined,
): Promise<FastifyReply> {
  let opened;
  try {
    opened = await store.openForRead(key);
  } catch (err) {
    return sendError(reply, openFailure(request, err, key, mission));
  }
  const { handle, stats } = opened;
  let streaming = false;
  try {
    const etag = record ? `"${record.sha256}"` : undefined;
    const lastModified = stats.mtime.toUTCString();
    const validators: Record<string, string> = { 'Last-Modified': lastModified, ...(record ? { ETag: etag!, 'Repr-Digest': reprDigest(record.sha256) } : {}) };
    const answer = conditionalAnswer(request.method, request.headers, { etag, lastModified: stats.mtime, size: stats.size });
    switch (answer.kind) {
      case 'precondition-failed':
        return sendError(reply, PRECONDITION_FAILED.create(answer.header, answer.header === 'If-Match' ? (etag ?? 'not known until it is indexed') : lastModified));
      case 'not-modified':
        return reply.code(304).headers(validators).send();
      case 'range-not-satisfiable':
        return sendError(reply, raise(RANGE_NOT_SATISFIABLE, [answer.range, stats.size], { headers: { 'Content-Range': `bytes */${stats.size}` } }));
      default:
        break;
    }
    const fileName = key.slice(key.lastIndexOf('/') + 1);
    const [start, end] = answer.kind === 'range' ? [answer.start, answer.end] : [0, stats.size - 1];
    reply
      .code(answer.kind === 'range' ? 206 : 200)
      .headers(validators)
      .header('Accept-Ranges', 'bytes')
      .header('Content-Type', storedMediaType(fileName))
      .header('Content-Length', String(Math.max(0, end - start + 1)))
      .header('Content-Disposition', `attachment; filename="${fileName}"`);
    if (answer.kind === 'range') reply.header('Content-Range', `bytes ${start}-${end}/${stats.size}`);
    // An empty stream: Fastify keeps the Content-Length set above (an empty send() would make it 0).
    if (request.method === 'HEAD' || end < start) return reply.send(Readable.from([]));
    streaming = true;
    // The stream closes the handle when it ends or is destroyed (a client gone included).
    return reply.send(handle.createReadStream({ start, end, highWaterMark: READ_CHUNK }));
  } finally {
    if (!streaming) await handle.close();
  }
}

/** Why a stored file could not be opened, as the answer says it; what the operator must see is logged. */
function openFailure(request: FastifyRequest, err: unknown, key: string, mission: MissionConfig): ServerError {
  const code = (err as NodeJS.ErrnoException).code;
  // Gone meanwhile, or a symbolic link put there after the route's check (O_NOFOLLOW): nothing to serve.
  if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') return FILE_NOT_FOUND.create(key, exampleStoredPath(mission));
  if (err instanceof ServerError && err.code === NOT_A_REGULAR_FILE.code) {
    request.log.error({ file_path: key, reason: err.message }, 'download refused: not a regular file in the store (docs/trust.md)');
    return err;
  }
  request.log.error({ err, file_path: key }, 'stored file could not be read');
  return FILE_UNREADABLE.create();
}
