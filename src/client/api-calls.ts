import type { Readable } from 'node:stream';
import type { QueryFilter } from './archive-record.js';
import { queryString } from './archive-record.js';
import { BadResponseError, errorForStatus } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { discard, encodePath, readMessage } from './http-transport.js';

/**
 * The three endpoints of interface spec 4, one attempt each; callers decide what to
 * retry. Every non-success becomes the typed error for its status, with the server's text.
 */

/** GET /upload/{path}: the signed PUT address (a JSON string). */
export async function requestUploadAddress(ctx: ClientContext, requestPath: string): Promise<string> {
  const res = await ctx.transport.api(`/upload/${encodePath(requestPath)}`);
  if (res.statusCode !== 200) throw errorForStatus('upload', res.statusCode, await readMessage(res));
  const text = await res.body.text();
  return signedAddress(parseJson(text), text, 'upload');
}

/** GET /download/{path}: the signed GET address from the 302 (body `download_url`, else `Location`). */
export async function requestDownloadAddress(ctx: ClientContext, pathOrName: string): Promise<string> {
  const res = await ctx.transport.api(`/download/${encodePath(pathOrName)}`);
  if (res.statusCode >= 400) throw errorForStatus('download', res.statusCode, await readMessage(res));
  const text = await res.body.text();
  const body = parseJson(text) as { download_url?: unknown } | undefined;
  const location = res.headers.location;
  const address = typeof body?.download_url === 'string' ? body.download_url : typeof location === 'string' ? location : undefined;
  if (res.statusCode < 300 || res.statusCode >= 400 || address === undefined) {
    throw new BadResponseError(`expected a redirect to the file from /download, got ${res.statusCode}: ${text.slice(0, 200)}`, res.statusCode);
  }
  return signedAddress(new URL(address, ctx.transport.baseUrl).href, text, 'download');
}

/** GET /query: the open answer, a JSON array to be read as a stream. */
export async function openQuery(ctx: ClientContext, filter: QueryFilter): Promise<Readable> {
  const res = await ctx.transport.api(`/query${queryString(filter)}`);
  if (res.statusCode !== 200) throw errorForStatus('query', res.statusCode, await readMessage(res));
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    await discard(res);
    throw new BadResponseError(`expected JSON from /query, got ${String(res.headers['content-type'] ?? 'no content type')}`);
  }
  return res.body;
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
