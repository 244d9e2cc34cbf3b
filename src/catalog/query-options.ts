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
  return { key, file_path: filePath };
}
