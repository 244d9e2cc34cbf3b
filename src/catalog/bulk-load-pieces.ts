import type { FileRecord } from './file-record.js';

/** Smallest load that builds the secondary indexes after it instead of keeping them row by row. */
const REBUILD_AT = 20_000;

/**
 * The rule of both engines' bulk loads: once a load has more records than the table had when it
 * began (and at least REBUILD_AT), its secondary indexes are dropped and built once at its end,
 * far cheaper than as many random index inserts.
 */
export function outgrowsTable(loaded: number, rowsAtStart: number): boolean {
  return loaded >= REBUILD_AT && loaded > rowsAtStart;
}

/** Byte order of file paths as both engines store them (JS compares UTF-16 units; equal for the BMP). */
export const byPath = (a: FileRecord, b: FileRecord): number => (a.file_path < b.file_path ? -1 : a.file_path > b.file_path ? 1 : 0);

/**
 * A bulk load's input in pieces of `size` records. A synchronous source is read without a
 * promise per record (one per piece); an error of the source itself is kept in `failed`, so
 * that the load can tell it from a failure of its database.
 */
export async function* piecesOf(
  records: Iterable<FileRecord> | AsyncIterable<FileRecord>,
  size: number,
  failed: { error?: unknown },
): AsyncIterable<FileRecord[]> {
  const sync = Symbol.iterator in records;
  const iterator = sync ? (records as Iterable<FileRecord>)[Symbol.iterator]() : (records as AsyncIterable<FileRecord>)[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const piece: FileRecord[] = [];
      try {
        while (piece.length < size) {
          const item = sync ? (iterator as Iterator<FileRecord>).next() : await (iterator as AsyncIterator<FileRecord>).next();
          if (item.done) {
            done = true;
            break;
          }
          piece.push(item.value);
        }
      } catch (err) {
        done = true; // a source that threw is finished
        failed.error = err;
        throw err;
      }
      if (piece.length > 0) yield piece;
      if (done) return;
    }
  } finally {
    // The load stopped early (its database failed): let the source release what it holds.
    if (!done) await iterator.return?.();
  }
}
