import type { FileRecord } from './file-record.js';

/**
 * A query's records, as the Catalog port promises (an AsyncIterable of records), that can
 * also be read a page at a time: a writer of large answers then loops over each page
 * synchronously instead of awaiting once per record.
 */
export class RecordPages implements AsyncIterable<FileRecord> {
  constructor(
    private readonly source: () => AsyncIterable<readonly FileRecord[]>,
    /**
     * The same records already as JSON text, each exactly JSON.stringify(record), when the
     * backend can write them itself (SQLite's json_object): no record object is made.
     */
    private readonly jsonSource?: () => AsyncIterable<readonly string[]>,
  ) {}

  pages(): AsyncIterable<readonly FileRecord[]> {
    return this.source();
  }

  /** Pages of JSON texts, or undefined when the backend does not write JSON. */
  jsonPages(): AsyncIterable<readonly string[]> | undefined {
    return this.jsonSource?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<FileRecord> {
    for await (const page of this.source()) yield* page;
  }
}

/** Pages of any async iterable: its own when it is RecordPages, else one item per page. */
export async function* pagesOf<T>(items: AsyncIterable<T>): AsyncIterable<readonly T[]> {
  if (items instanceof RecordPages) {
    yield* (items as RecordPages).pages() as AsyncIterable<readonly T[]>;
    return;
  }
  for await (const item of items) yield [item];
}
