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

  /**
   * Record by record: a resolved promise per record while a page lasts, where an async
   * generator would take several promises and turns of the event loop for each (~0.1 ms of a
   * 900-record answer). Calls made before the previous one settled wait for it.
   */
  [Symbol.asyncIterator](): AsyncIterator<FileRecord> {
    const pages = this.source()[Symbol.asyncIterator]();
    let page: readonly FileRecord[] = [];
    let at = 0;
    let done = false;
    let pending: Promise<IteratorResult<FileRecord>> | undefined;
    const fill = async (): Promise<IteratorResult<FileRecord>> => {
      while (!done) {
        const next = await pages.next();
        if (next.done) break;
        page = next.value;
        at = 0;
        if (page.length > 0) return { done: false, value: page[at++]! };
      }
      done = true;
      return { done: true, value: undefined };
    };
    const next = (): Promise<IteratorResult<FileRecord>> => {
      if (pending) return pending.then(next, next);
      if (at < page.length) return Promise.resolve({ done: false, value: page[at++]! });
      if (done) return Promise.resolve({ done: true, value: undefined });
      const filling = fill().finally(() => {
        if (pending === filling) pending = undefined;
      });
      pending = filling;
      return filling;
    };
    return {
      next,
      // A consumer that stops early (break, throw) lets the pages go, as a generator would.
      return: async () => {
        done = true;
        page = [];
        await pages.return?.();
        return { done: true, value: undefined };
      },
    };
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
