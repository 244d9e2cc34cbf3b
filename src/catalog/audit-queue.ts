import { keysetPages, QUERY_PAGE_SIZE } from './keyset-pages.js';
import { RECORD_COLUMN_LIST, recordOfRow } from './record-columns.js';
import type { FileRecord } from './file-record.js';
import type { ReadRows } from './record-reads.js';
import { archivedSql } from './archived-sql.js';

/** Only archived files are audited, and counted by the audit's metrics. */
const ARCHIVED = archivedSql();

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
 * The audit queue as SQL text for both engines: first the files an earlier run began reading
 * and never recorded (a row of audit_reads: the run was killed, or stopped by its time limit or
 * an outage, in the middle of the file), then never-verified files in file_path
 * order, then the oldest verified first ((verified_date, file_path) order). Two ranges of the
 * index files_verified (verified_date, file_path), one after the other, rather than one
 * ORDER BY with NULLS FIRST: SQLite and PostgreSQL put NULLs at opposite ends, and each range
 * is then a plain index walk. Keyset pages: no cursor is held while the files are read.
 * Archived files only: a withdrawn file's bytes are evidence, never served, and
 * `sdc purge` deletes them (docs/deploy.md "Fixity audits").
 */
export async function* auditQueue(read: ReadRows, options: AuditQueueOptions): AsyncIterable<readonly FileRecord[]> {
  const size = options.pageSize ?? QUERY_PAGE_SIZE;
  const prefix = options.prefix ?? '';
  const inPrefix = prefix === '' ? '' : ' AND file_path >= ? AND file_path < ?';
  const prefixParams = prefix === '' ? [] : [prefix, prefix + PREFIX_END];
  let turn = 0;
  // A few rows at most (one per run that died reading), read in one statement.
  const interrupted = await read(
    `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE file_path IN (SELECT file_path FROM audit_reads) AND ${ARCHIVED}${inPrefix} ORDER BY file_path LIMIT ?`,
    [...prefixParams, size],
    turn++,
  );
  if (interrupted.length > 0) yield interrupted.map(recordOfRow);
  const never = keysetPages(
    async (after: string | undefined, limit) => {
      const rows = await read(
        `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE verified_date IS NULL AND ${ARCHIVED}${inPrefix}${after === undefined ? '' : ' AND file_path > ?'} ORDER BY file_path LIMIT ?`,
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
        `SELECT ${RECORD_COLUMN_LIST} FROM files WHERE verified_date < ? AND ${ARCHIVED}${position}${inPrefix} ORDER BY verified_date, file_path LIMIT ?`,
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

/** What the catalog says of its files' fixity, cheaply (the indexes answer): for /metrics. */
export interface FixityStatus {
  /** Files whose last audit found other bytes, or none. */
  readonly mismatch: number;
  readonly missing: number;
  /** The oldest verified_date, absent when no file was ever verified. */
  readonly oldestVerified?: string;
  /** Whether some file was never verified. */
  readonly neverVerified: boolean;
}

/**
 * The statements of FixityStatus: the failures from the partial index files_fixity_failed
 * (few rows), the oldest date and a never-verified file from one probe each of files_verified.
 * `> ''` rather than IS NOT NULL: a range every planner takes on the index. Archived files only,
 * as the audit reads them (withdrawn ones are rare: the probes stay on the index).
 */
export const FIXITY_FAILURES_SQL = "SELECT fixity, count(*) FROM files WHERE fixity IN ('mismatch', 'missing') GROUP BY fixity";
export const OLDEST_VERIFIED_SQL = `SELECT verified_date FROM files WHERE verified_date > '' AND ${ARCHIVED} ORDER BY verified_date LIMIT 1`;
export const NEVER_VERIFIED_SQL = `SELECT 1 FROM files WHERE verified_date IS NULL AND ${ARCHIVED} LIMIT 1`;
/** Files verified at least once: a count over the index's range, as costly as counting the catalog (cached as long). */
export const VERIFIED_COUNT_SQL = "SELECT count(*) FROM files WHERE verified_date > ''";

/** FixityStatus from its statements run by `read`. */
export async function fixityStatus(read: ReadRows): Promise<FixityStatus> {
  const [failures, oldest, never] = await Promise.all([
    read(FIXITY_FAILURES_SQL, [], 0),
    read(OLDEST_VERIFIED_SQL, [], 0),
    read(NEVER_VERIFIED_SQL, [], 0),
  ]);
  const count = (fixity: string) => Number(failures.find((row) => row[0] === fixity)?.[1] ?? 0);
  const oldestVerified = oldest[0] === undefined ? undefined : String(oldest[0][0]);
  return { mismatch: count('mismatch'), missing: count('missing'), ...(oldestVerified === undefined ? {} : { oldestVerified }), neverVerified: never.length > 0 };
}
