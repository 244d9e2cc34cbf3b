import { openQuery } from './api-calls.js';
import { isArchiveRecord, type ArchiveRecord, type QueryFilter } from './archive-record.js';
import { BadResponseError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { readJsonArray } from './json-array-reader.js';
import { withRetry } from './retry.js';

/**
 * Records matching a filter, one at a time as the answer streams in. Opening the query
 * is retried; once records have been handed out a failure is final (a retry could not
 * tell the caller which records it already has).
 */
export async function* queryRecords(ctx: ClientContext, filter: QueryFilter): AsyncIterable<ArchiveRecord> {
  const body = await withRetry(ctx.retry, () => openQuery(ctx, filter), ctx.onRetry);
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
