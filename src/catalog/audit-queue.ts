import { keysetPages, QUERY_PAGE_SIZE } from './keyset-pages.js';
import { RECORD_COLUMN_LIST, recordOfRow } from './record-columns.js';
import type { FileRecord } from './file-record.js';
import type { ReadRows } from './record-reads.js';

/** What a fixity audit found of a file's stored bytes (docs/deploy.md "Fixity audits"). */
export type FixityOutcome = 'ok' | 'mismatch' | 'missing';

/** The outcomes that mean the stored bytes are not the file: never served as if good (docs/api.md "Damaged files"). */
export function fixityFailed(fixity: string | undefined): fixity is 'mismatch' | 'missing' {
  return fixity === 'mismatch' || fixity === 'missing';
}

export interface AuditQueueOptions {
  /** Only files whose stored path starts with this (e.g. `imap/mag/`). */
  readonly prefix?: string;
  /**
   * Only files never verified, or verified before this (ISO-8601 UTC): a run passes its own
   * start, so that the files it verifies (stamped later) do not come round again in it.
   */
  readonly verifiedBefore: string;
  /** Rows per statement (tests page with small ones). */
  readonly pageSize?: number;
}

/** Above every character of a stored path in byte order (UTF-8 of U+10FFFF): the end of a prefix's range. */
const PREFIX_END = '\u{10FFFF}';

/**
 * The audit queue as SQL text for both engines: never-verified files first in file_path
 * order, then the oldest verified first ((verified_date, file_path) order). Two ranges of the
 * index files_verified (verified_date, file_path), one after the other, rather than one
 * ORDER BY with NULLS FIRST: SQLite and PostgreSQL put NULLs at opposite ends, and each range
 * is then a plain index walk. Keyset pages: no cursor is held while the files are read.
 */
export async function* auditQueue(read: ReadRows, options: AuditQueueOptions): AsyncIterable<readonly FileRecord[]> {
  const size = options.pageSize ?? QUERY_PAGE_SIZE;
  const prefix = options.prefix ?? '';
  const inPrefix = prefix === '' ? '' : ' AND file_path >= ? AND file_path < ?';
  const prefixParams = prefix === '' ? [] : [prefix, prefix + PREFIX_END];
  let turn = 0;
  const never = keysetPages(
    async (after: string | undefined, limit) => {
      const rows = await read(
        `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE verified_date IS NULL${inPrefix}${after === undefined ? '' : ' AND file_path > ?'} ORDER BY file_path LIMIT ?`,
        [...prefixParams, ...(after === undefined ? [] : [after]), limit],
        turn++,
      );
      return rows.map(recordOfRow);
    },
    (last) => last.file_path,
    undefined,
    Infinity,
    size,
  );
  yield* never;
  const oldest = keysetPages(
    async (after: { readonly date: string; readonly path: string } | undefined, limit) => {
      const position = after === undefined ? '' : ' AND (verified_date > ? OR (verified_date = ? AND file_path > ?))';
      const rows = await read(
        `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE verified_date < ?${position}${inPrefix} ORDER BY verified_date, file_path LIMIT ?`,
        [options.verifiedBefore, ...(after === undefined ? [] : [after.date, after.date, after.path]), ...prefixParams, limit],
        turn++,
      );
      return rows.map(recordOfRow);
    },
    (last) => ({ date: last.verified_date!, path: last.file_path }),
    undefined,
    Infinity,
    size,
  );
  yield* oldest;
}
