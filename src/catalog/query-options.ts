import type { FileRecord } from './file-record.js';

import { MAX_PAGE_LIMIT, SORT_FIELDS, type SortField } from '../wire/query.js';

// Sort keys and the page limit are part of the wire format (src/wire/query.ts).
export { MAX_PAGE_LIMIT, SORT_FIELDS, type SortField };

export interface QuerySort {
  readonly field: SortField;
  readonly descending: boolean;
}

export const DEFAULT_SORT: QuerySort = Object.freeze({ field: 'file_path', descending: false });

/** Where a page starts: just after this record in the sort order (keyset, not offset). */
export interface QueryPosition {
  readonly key: string;
  readonly file_path: string;
}

export interface QueryOptions {
  readonly sort?: QuerySort;
  readonly after?: QueryPosition;
  /** At most this many records (all when absent). */
  readonly limit?: number;
}


export function positionOf(record: FileRecord, sort: QuerySort): QueryPosition {
  return { key: record[sort.field], file_path: record.file_path };
}

/**
 * The opaque `cursor` of a page: the sort it belongs to and the last record's position,
 * base64url-encoded. Stable under inserts: a page never repeats or skips a record that
 * existed when the walk began.
 */
export function encodeCursor(sort: QuerySort, position: QueryPosition): string {
  return Buffer.from(JSON.stringify([sort.descending ? `-${sort.field}` : sort.field, position.key, position.file_path])).toString('base64url');
}

/** Longest value a cursor may carry: far above any stored path or field (names are short). */
const MAX_CURSOR_VALUE = 1024;

/**
 * A value a cursor may carry: no NUL or other control character (PostgreSQL's text refuses
 * NUL, SQLite would take it: both engines must give one answer), no unpaired surrogate (not
 * UTF-8, so each driver would mend it its own way), not longer than any stored value.
 */
function cursorValueProblem(value: string): string | undefined {
  if (value.length > MAX_CURSOR_VALUE) return `its position is longer than any stored value (${MAX_CURSOR_VALUE} characters).`;
  // eslint-disable-next-line no-control-regex -- control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'its position holds a NUL or another control character, which no record has.';
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)) return 'its position is not well-formed Unicode.';
  return undefined;
}

/**
 * The position a cursor (or the feed's Last-Event-ID, the same encoding) names, or why it is
 * refused: decoded and checked here once, for both catalog engines (docs/api.md "Paging").
 */
export function decodeCursor(cursor: string, sort: QuerySort): QueryPosition | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return 'expected a cursor exactly as a previous answer gave it (Link or X-Next-Cursor header).';
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || !parsed.every((p) => typeof p === 'string')) {
    return 'expected a cursor exactly as a previous answer gave it (Link or X-Next-Cursor header).';
  }
  const [sortName, key, filePath] = parsed as [string, string, string];
  if (sortName !== (sort.descending ? `-${sort.field}` : sort.field)) {
    return `this cursor belongs to sort=${sortName}; keep the other parameters of the first page.`;
  }
  const problem = cursorValueProblem(key) ?? cursorValueProblem(filePath);
  if (problem) return `expected a cursor exactly as a previous answer gave it (Link or X-Next-Cursor header); ${problem}`;
  return { key, file_path: filePath };
}
