import type { Readable } from 'node:stream';
import { header, nextCursorOf } from './api-calls.js';
import { queryString, type QueryParameters } from './archive-record.js';
import { AnswerTooLargeError, BadResponseError, errorForStatus } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { discard, readMessage } from './http-transport.js';
import { DEFAULT_PAGE_SIZE } from './query-records.js';
import { withRetry } from './retry.js';

/** Media type of a Metalink 4 document (RFC 5854). */
export const METALINK_TYPE = 'application/metalink4+xml';

/** A query's files as a Metalink document (docs/client.md, "Take a search elsewhere"). */
export interface MetalinkAnswer {
  /** The document's text, as it streams in. */
  readonly text: AsyncIterable<string>;
  /** With `limit`: how many files match in all. */
  readonly total?: number;
  /** With `limit`, when another page follows: its cursor. */
  readonly nextCursor?: string;
}

interface OpenDocument {
  readonly body: Readable;
  readonly total?: number;
  readonly nextCursor?: string;
}

/**
 * The Metalink document of a query's files (`Accept: application/metalink4+xml`, the
 * server's `format=metalink`), or undefined when nothing matches (the server's 404
 * SDC_NOTHING_TO_LIST: a Metalink lists at least one file). With `limit`, one page as the
 * server wrote it. Without, every file in one document: when the service pages the answer
 * or refuses it as too large for one answer (the Lambda carrier), the pages are joined,
 * each page's <file> lines in order (the server writes one <file> a line).
 */
export async function queryMetalink(ctx: ClientContext, query: QueryParameters): Promise<MetalinkAnswer | undefined> {
  if (query.limit !== undefined) {
    const page = await withRetry(ctx.retry, () => openMetalink(ctx, query), ctx.onRetry);
    return page && { text: decoded(page.body), total: page.total, nextCursor: page.nextCursor };
  }
  let first: OpenDocument | undefined;
  try {
    first = await withRetry(ctx.retry, () => openMetalink(ctx, query), ctx.onRetry);
  } catch (err) {
    if (!(err instanceof AnswerTooLargeError)) throw err;
    // Too large for one answer: the same query a page at a time, the first page read here to learn whether any file matches.
    const page = await readPage(ctx, { ...query, limit: DEFAULT_PAGE_SIZE });
    if (page === undefined) return undefined;
    return { text: joined(ctx, query, (async function* () { yield page.text; })(), page.nextCursor) };
  }
  if (first === undefined) return undefined;
  return { text: joined(ctx, query, decoded(first.body), first.nextCursor) };
}

/** GET /query asking for a Metalink: the open answer, or undefined when nothing matches. */
async function openMetalink(ctx: ClientContext, query: QueryParameters): Promise<OpenDocument | undefined> {
  const res = await ctx.transport.api(`/query${queryString(query)}`, { accept: METALINK_TYPE });
  const code = header(res.headers['x-error-code']);
  if (res.statusCode === 404 && code === 'SDC_NOTHING_TO_LIST') {
    await discard(res);
    return undefined;
  }
  if (res.statusCode === 400 && code === 'SDC_ANSWER_TOO_LARGE') throw new AnswerTooLargeError(await readMessage(res), 400);
  if (res.statusCode !== 200) throw errorForStatus('query', res.statusCode, await readMessage(res));
  const type = String(res.headers['content-type'] ?? '');
  if (!type.startsWith(METALINK_TYPE)) {
    await discard(res);
    throw new BadResponseError(`expected a Metalink document from /query, got ${type || 'no content type'} (a server older than format=metalink?)`);
  }
  const total = Number(header(res.headers['x-total-count']));
  return { body: res.body, total: Number.isSafeInteger(total) ? total : undefined, nextCursor: nextCursorOf(res.headers) };
}

/** One page read whole (so a failure anywhere in it is retried whole). */
async function readPage(ctx: ClientContext, query: QueryParameters): Promise<{ text: string; nextCursor?: string } | undefined> {
  return withRetry(
    ctx.retry,
    async () => {
      const page = await openMetalink(ctx, query);
      if (page === undefined) return undefined;
      let text = '';
      for await (const piece of decoded(page.body)) text += piece;
      return { text, nextCursor: page.nextCursor };
    },
    ctx.onRetry,
  );
}

/**
 * One document: the first's lines but its closing tag, the <file> lines of every page
 * after it (following the next cursors, a page of DEFAULT_PAGE_SIZE at a time), then the
 * closing tag.
 */
async function* joined(ctx: ClientContext, query: QueryParameters, first: AsyncIterable<string>, cursor: string | undefined): AsyncIterable<string> {
  let rest = '';
  for await (const piece of first) {
    const parts = (rest + piece).split('\n');
    rest = parts.pop()!;
    const kept = parts.filter((line) => line !== '</metalink>');
    if (kept.length > 0) yield `${kept.join('\n')}\n`;
  }
  if (rest !== '' && rest !== '</metalink>') yield `${rest}\n`;
  while (cursor !== undefined) {
    const page = await readPage(ctx, { ...query, limit: DEFAULT_PAGE_SIZE, cursor });
    if (page === undefined) break;
    let files = '';
    for (const line of page.text.split('\n')) if (line.startsWith('<file ')) files += `${line}\n`;
    yield files;
    cursor = page.nextCursor;
  }
  yield '</metalink>\n';
}

async function* decoded(body: Readable): AsyncIterable<string> {
  const decoder = new TextDecoder();
  for await (const chunk of body) yield decoder.decode(chunk as Uint8Array, { stream: true });
  const tail = decoder.decode();
  if (tail) yield tail;
}
