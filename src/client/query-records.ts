import type { Readable } from 'node:stream';
import { openQuery } from './api-calls.js';
import { isArchiveRecord, type ArchiveRecord, type QueryParameters } from './archive-record.js';
import { AnswerTooLargeError, BadResponseError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { readJsonArray } from './json-array-reader.js';
import { withRetry } from './retry.js';

/** One page of a query answer. */
export interface QueryPage {
  readonly records: readonly ArchiveRecord[];
  /** How many records match in all (X-Total-Count). */
  readonly total?: number;
  /** Pass as `cursor` for the next page; absent on the last page. */
  readonly nextCursor?: string;
}

/** Page size of `pages()` when the query names none. */
export const DEFAULT_PAGE_SIZE = 1000;

/**
 * Records matching a query, one at a time as the answer streams in. Opening the query
 * is retried; once records have been handed out a failure is final (a retry could not
 * tell the caller which records it already has).
 *
 * Without `limit` the whole answer is asked for in one request, and taken page by page
 * instead when the service pages it (a next cursor on an answer not asked to be paged) or
 * refuses it as too large for one answer (the Lambda carrier): every carrier answers in full.
 */
export async function* queryRecords(ctx: ClientContext, query: QueryParameters): AsyncIterable<ArchiveRecord> {
  let answer;
  try {
    answer = await withRetry(ctx.retry, () => openQuery(ctx, query), ctx.onRetry);
  } catch (err) {
    // Too large for one answer (a Lambda answer is at most 6 MB): the same query, a page at a time.
    if (query.limit !== undefined || !(err instanceof AnswerTooLargeError)) throw err;
    for await (const page of queryPages(ctx, query)) yield* page.records;
    return;
  }
  yield* recordsOf(answer.body);
  if (query.limit === undefined && answer.nextCursor !== undefined) {
    for await (const page of queryPages(ctx, { ...query, cursor: answer.nextCursor })) yield* page.records;
  }
}

/**
 * One page (`limit` records, default 1000), read whole: a page is bounded, and reading
 * it whole lets a failure anywhere in it be retried without handing out a record twice.
 */
export function queryPage(ctx: ClientContext, query: QueryParameters): Promise<QueryPage> {
  const paged = { ...query, limit: query.limit ?? DEFAULT_PAGE_SIZE };
  return withRetry(
    ctx.retry,
    async () => {
      const answer = await openQuery(ctx, paged);
      const records: ArchiveRecord[] = [];
      for await (const record of recordsOf(answer.body)) records.push(record);
      return { records, total: answer.total, nextCursor: answer.nextCursor };
    },
    ctx.onRetry,
  );
}

/**
 * Every page of a query, following each answer's next cursor: a harvester walks an
 * answer of any size with one page in memory, each page retried on its own. Keyset
 * cursors: every record that existed when the walk began is seen exactly once.
 */
export async function* queryPages(ctx: ClientContext, query: QueryParameters): AsyncIterable<QueryPage> {
  let cursor = query.cursor;
  for (;;) {
    const page = await queryPage(ctx, { ...query, cursor });
    yield page;
    if (page.nextCursor === undefined || page.records.length === 0) return;
    cursor = page.nextCursor;
  }
}

async function* recordsOf(body: Readable): AsyncIterable<ArchiveRecord> {
  for await (const value of readJsonArray(body)) {
    if (!isArchiveRecord(value)) {
      throw new BadResponseError(`the query answer holds something that is not a file record: ${JSON.stringify(value).slice(0, 200)}`);
    }
    yield value;
  }
}

/** The record of one stored path, or undefined when the catalog has none. */
export async function findRecord(ctx: ClientContext, path: string): Promise<ArchiveRecord | undefined> {
  for await (const record of queryRecords(ctx, { file_path: path })) {
    if (record.file_path === path) return record;
  }
  return undefined;
}
