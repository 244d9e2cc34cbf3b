import type { Readable } from 'node:stream';
import type { QueryFilter, QueryParameters } from './archive-record.js';
import { isArchiveRecord, queryString, type ArchiveRecord } from './archive-record.js';
import { AnswerTooLargeError, BadResponseError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { answerError, discard, encodePath, readMessage } from './http-transport.js';

/**
 * The three endpoints (docs/api.md, The three endpoints), one attempt each; callers decide what to
 * retry. Every non-success becomes the typed error for its status, with the server's text.
 */

/** GET /upload/{path}: the signed PUT address (a JSON string). */
export async function requestUploadAddress(ctx: ClientContext, requestPath: string, sha256?: string): Promise<string> {
  // The declared digest binds the address to these bytes (docs/api.md, "Checked transfers").
  const res = await ctx.transport.api(`/upload/${encodePath(requestPath)}${sha256 === undefined ? '' : `?sha256=${sha256}`}`);
  if (res.statusCode !== 200) throw await answerError('upload', res);
  const text = await res.body.text();
  return signedAddress(parseJson(text), text, 'upload');
}

/** GET /download/{path}: the signed GET address from the 302 (body `download_url`, else `Location`). */
export async function requestDownloadAddress(ctx: ClientContext, pathOrName: string): Promise<string> {
  const res = await ctx.transport.api(`/download/${encodePath(pathOrName)}`);
  if (res.statusCode >= 400) throw await answerError('download', res);
  const text = await res.body.text();
  const body = parseJson(text) as { download_url?: unknown } | undefined;
  const location = res.headers.location;
  const address = typeof body?.download_url === 'string' ? body.download_url : typeof location === 'string' ? location : undefined;
  if (res.statusCode < 300 || res.statusCode >= 400 || address === undefined) {
    throw new BadResponseError(`expected a redirect to the file from /download, got ${res.statusCode}: ${text.slice(0, 200)}`, res.statusCode);
  }
  return signedAddress(new URL(address, ctx.transport.baseUrl).href, text, 'download');
}

/** POST /withdraw/{path} (docs/api.md "Withdrawn files"): the record as it now is. Never retried: a second try of one that went through answers 409. */
export async function requestWithdrawal(ctx: ClientContext, path: string, body: { reason: string; superseded_by?: string }): Promise<ArchiveRecord> {
  const res = await ctx.transport.apiCall('POST', `/withdraw/${encodePath(path)}`, body);
  if (res.statusCode !== 200) throw await answerError('withdraw', res);
  const text = await res.body.text();
  const record = parseJson(text);
  if (!isArchiveRecord(record)) throw new BadResponseError(`expected the withdrawn file's record from /withdraw, got: ${text.slice(0, 200)}`, res.statusCode);
  return record;
}

/** An open query answer: the body (a JSON array) still to be read, and the paging headers. */
export interface OpenAnswer {
  readonly body: Readable;
  /** With `limit`: how many records match in all (X-Total-Count). */
  readonly total?: number;
  /** With `limit`, when another page follows: its cursor (X-Next-Cursor, else the Link's). */
  readonly nextCursor?: string;
}

/** GET /query: the open answer, a JSON array to be read as a stream. */
export async function openQuery(ctx: ClientContext, query: QueryParameters): Promise<OpenAnswer> {
  const res = await ctx.transport.api(`/query${queryString(query)}`);
  if (res.statusCode === 400 && header(res.headers['x-error-code']) === 'SDC_ANSWER_TOO_LARGE') throw new AnswerTooLargeError(await readMessage(res), 400, { serverCode: 'SDC_ANSWER_TOO_LARGE' });
  if (res.statusCode !== 200) throw await answerError('query', res);
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    await discard(res);
    throw new BadResponseError(`expected JSON from /query, got ${String(res.headers['content-type'] ?? 'no content type')}`);
  }
  const total = Number(header(res.headers['x-total-count']));
  return { body: res.body, total: Number.isSafeInteger(total) ? total : undefined, nextCursor: nextCursorOf(res.headers) };
}

/** GET /events: the open live feed (Server-Sent Events), from just after `lastEventId` when given. */
export async function openFeed(ctx: ClientContext, filter: QueryFilter, lastEventId: string | undefined, signal?: AbortSignal): Promise<Readable> {
  const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache' };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  const res = await ctx.transport.api(`/events${queryString(filter)}`, headers, signal);
  if (res.statusCode !== 200) throw await answerError('query', res);
  if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    await discard(res);
    throw new BadResponseError(`expected an event stream from /events, got ${String(res.headers['content-type'] ?? 'no content type')}`);
  }
  return res.body;
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** X-Next-Cursor, else the `cursor` of the `Link: <...>; rel="next"` address. */
export function nextCursorOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const cursor = header(headers['x-next-cursor']);
  if (cursor) return cursor;
  const next = /<([^>]*)>\s*;\s*rel="?next"?/.exec(header(headers.link) ?? '');
  if (!next) return undefined;
  return new URL(next[1]!, 'http://relative.invalid/').searchParams.get('cursor') ?? undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function signedAddress(value: unknown, text: string, what: string): string {
  if (typeof value === 'string' && /^https?:\/\//.test(value)) return value;
  throw new BadResponseError(`expected an http(s) address from /${what}, got ${text.slice(0, 200)}`);
}

/** What POST /uploads/{path} answers: an open upload in parts. */
export interface OpenMultipart {
  readonly path: string;
  readonly uploadId: string;
  readonly partSize: number;
  readonly maxParts: number;
}

export interface StoredPart {
  readonly partNumber: number;
  readonly etag: string;
  readonly size: number;
}

/** POST /uploads/{path}?size=: opens an upload in parts; undefined when the service offers none. */
export async function startMultipart(ctx: ClientContext, requestPath: string, size: number, sha256?: string): Promise<OpenMultipart | undefined> {
  const res = await ctx.transport.apiCall('POST', `/uploads/${encodePath(requestPath)}?size=${size}${sha256 === undefined ? '' : `&sha256=${sha256}`}`);
  // A service without uploads in parts (an older one, or a store without them).
  if (res.statusCode === 404 || res.statusCode === 405 || res.statusCode === 501) {
    await discard(res);
    return undefined;
  }
  if (res.statusCode !== 200) throw await answerError('upload', res);
  const text = await res.body.text();
  const body = parseJson(text) as Partial<OpenMultipart> | undefined;
  if (typeof body?.uploadId !== 'string' || typeof body.partSize !== 'number' || typeof body.path !== 'string' || !(body.partSize > 0)) {
    throw new BadResponseError(`expected an upload id and part size from /uploads, got ${text.slice(0, 200)}`);
  }
  return { path: body.path, uploadId: body.uploadId, partSize: body.partSize, maxParts: body.maxParts ?? 10_000 };
}

/** GET /uploads/{path}?uploadId=&parts=: the parts stored so far and addresses of the parts named. */
export async function multipartAddresses(
  ctx: ClientContext,
  path: string,
  uploadId: string,
  partNumbers: readonly number[],
): Promise<{ uploaded: StoredPart[]; addresses: Map<number, string> }> {
  const parts = partNumbers.length === 0 ? '' : `&parts=${partNumbers.join(',')}`;
  const res = await ctx.transport.api(`/uploads/${encodePath(path)}?uploadId=${encodeURIComponent(uploadId)}${parts}`);
  if (res.statusCode !== 200) throw await answerError('upload', res);
  const text = await res.body.text();
  const body = parseJson(text) as { uploaded?: StoredPart[]; parts?: { partNumber: number; url: string }[] } | undefined;
  if (!Array.isArray(body?.uploaded) || !Array.isArray(body.parts)) {
    throw new BadResponseError(`expected parts from /uploads, got ${text.slice(0, 200)}`);
  }
  const addresses = new Map<number, string>();
  for (const p of body.parts) addresses.set(p.partNumber, signedAddress(p.url, text, 'uploads'));
  return { uploaded: body.uploaded, addresses };
}

/** POST /uploads/{path}?uploadId=: joins the parts; the stored file's size and SHA-256. */
export async function completeMultipart(
  ctx: ClientContext,
  path: string,
  uploadId: string,
  parts: readonly { partNumber: number; etag: string }[],
): Promise<{ size: number; sha256: string }> {
  const res = await ctx.transport.apiCall('POST', `/uploads/${encodePath(path)}?uploadId=${encodeURIComponent(uploadId)}`, { parts });
  if (res.statusCode !== 200) throw await answerError('upload', res);
  return (await res.body.json()) as { size: number; sha256: string };
}

/** DELETE /uploads/{path}?uploadId=: drops an open upload. */
export async function abortMultipart(ctx: ClientContext, path: string, uploadId: string): Promise<void> {
  const res = await ctx.transport.apiCall('DELETE', `/uploads/${encodePath(path)}?uploadId=${encodeURIComponent(uploadId)}`);
  if (res.statusCode >= 300) throw await answerError('upload', res);
  await discard(res);
}
