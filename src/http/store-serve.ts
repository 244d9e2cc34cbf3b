import send from '@fastify/send';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileRecord } from '../catalog/index.js';
import { FILE_NOT_FOUND, FILE_UNREADABLE, PRECONDITION_FAILED, ServerError } from '../errors/index.js';
import { exampleStoredPath, type MissionConfig } from '../mission/index.js';
import type { LocalObjectStore } from '../store/index.js';
import { storedMediaType } from '../wire/media-type.js';
import { sendError } from './error-answer.js';

/** RFC 9530's Repr-Digest of bytes whose SHA-256 is `hex`. */
export function reprDigest(hex: string): string {
  return `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`;
}

/** True when an If-None-Match (or If-Match) list names `etag` (compared weakly) or is `*`. */
function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * The stored bytes with Range and Last-Modified (@fastify/send), and, when the file has a
 * record, `Repr-Digest` (RFC 9530) and a strong ETag that is its SHA-256, with
 * If-None-Match and If-Range decided here against it. Without a record (a crash between
 * the store's write and the catalog's, until reconcile indexes it) the bytes are served
 * without those headers: nothing true could be said of them without reading them.
 */
export async function serveStored(request: FastifyRequest, reply: FastifyReply, store: LocalObjectStore, mission: MissionConfig, key: string, record: FileRecord | undefined): Promise<FastifyReply> {
  const headersIn = request.raw.headers;
  const etag = record ? `"${record.sha256}"` : undefined;
  if (etag !== undefined) {
    const ifMatch = headersIn['if-match'];
    if (typeof ifMatch === 'string') {
      // Decided here: send would compare it with an ETag of its own, which it no longer makes.
      if (!noneMatchHits(ifMatch, etag) || ifMatch.trim().startsWith('W/')) return sendError(reply, PRECONDITION_FAILED.create(etag));
      delete headersIn['if-match'];
    }
    const noneMatch = headersIn['if-none-match'];
    if (typeof noneMatch === 'string') {
      if (noneMatchHits(noneMatch, etag)) return reply.code(304).header('ETag', etag).header('Repr-Digest', reprDigest(record!.sha256)).send();
      // RFC 9110: If-Modified-Since is ignored when If-None-Match is sent.
      delete headersIn['if-none-match'];
      delete headersIn['if-modified-since'];
    }
    const ifRange = headersIn['if-range'];
    if (typeof ifRange === 'string' && ifRange.includes('"')) {
      // An entity tag: the Range holds only for these very bytes (strong comparison), else the whole file.
      if (ifRange.trim() !== etag) delete headersIn.range;
      delete headersIn['if-range'];
    }
  }
  const result = await send(request.raw, encodeURI(key), {
    root: store.root,
    dotfiles: 'deny',
    index: false,
    acceptRanges: true,
    // 256 KiB reads: fewer, larger chunks than the 64 KiB default, still small per download.
    highWaterMark: 256 * 1024,
    // Ours (the SHA-256) instead of one made of size and mtime.
    etag: false,
    lastModified: true,
  });
  if (result.type === 'error') {
    const status = (result.metadata.error as { status?: number }).status ?? 404;
    // Any other failure to read: the file's status (e.g. 500) with the one text, as before.
    return status === 404
      ? sendError(reply, FILE_NOT_FOUND.create(key, exampleStoredPath(mission)))
      : sendError(reply, new ServerError(FILE_UNREADABLE.code, status, FILE_UNREADABLE.message()));
  }
  const fileName = key.slice(key.lastIndexOf('/') + 1);
  const headers = result.headers as Record<string, string>;
  if (headers['Content-Type']) headers['Content-Type'] = storedMediaType(fileName);
  if (record) {
    headers.ETag = etag!;
    headers['Repr-Digest'] = reprDigest(record.sha256);
  }
  return reply
    .code(result.statusCode)
    .headers(headers)
    .header('Content-Disposition', `attachment; filename="${fileName}"`)
    .send(result.stream);
}
