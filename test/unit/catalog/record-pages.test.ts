import { describe, expect, it } from 'vitest';
import { syntheticRecords, type FileRecord } from '../../../src/catalog/index.js';
import { RecordPages } from '../../../src/catalog/record-pages.js';
import { IMAP_MISSION } from '../../../src/mission/mission-config.js';

const records = [...syntheticRecords(IMAP_MISSION, 7)];

/** Pages of the given sizes (0 allowed), noting whether the source was closed. */
function paged(sizes: number[], failAfter?: number) {
  const state = { closed: false, pagesRead: 0 };
  const pages = new RecordPages(async function* () {
    try {
      let at = 0;
      for (const size of sizes) {
        if (failAfter !== undefined && state.pagesRead === failAfter) throw new Error('backend gone');
        state.pagesRead++;
        yield records.slice(at, at + size);
        at += size;
      }
    } finally {
      state.closed = true;
    }
  });
  return { pages, state };
}

describe('RecordPages, read record by record', () => {
  it('gives every record of every page in order, empty pages skipped', async () => {
    const { pages, state } = paged([3, 0, 2, 2, 0]);
    const out: FileRecord[] = [];
    for await (const r of pages) out.push(r);
    expect(out).toEqual(records);
    expect(state.closed).toBe(true);
    const none = paged([0, 0]);
    for await (const _ of none.pages) throw new Error('no record expected');
  });

  it('lets the pages go when the reader stops early, reading no further page', async () => {
    const { pages, state } = paged([3, 2, 2]);
    const out: FileRecord[] = [];
    for await (const r of pages) {
      out.push(r);
      if (out.length === 4) break;
    }
    expect(out).toEqual(records.slice(0, 4));
    expect(state).toEqual({ closed: true, pagesRead: 2 });
  });

  it('answers calls made before the previous one settled in order, none lost', async () => {
    const { pages } = paged([2, 0, 3, 2]);
    const it = pages[Symbol.asyncIterator]();
    const results = await Promise.all(Array.from({ length: 9 }, () => it.next()));
    expect(results.filter((r) => !r.done).map((r) => r.value)).toEqual(records);
    expect(results.slice(7).every((r) => r.done)).toBe(true);
  });

  it('passes on a failure of the pages, then ends', async () => {
    const { pages } = paged([3, 2, 2], 1);
    const it = pages[Symbol.asyncIterator]();
    for (let i = 0; i < 3; i++) expect((await it.next()).value).toEqual(records[i]);
    await expect(it.next()).rejects.toThrow('backend gone');
    expect((await it.next()).done).toBe(true);
  });
});
