import type { FileRecord } from './file-record.js';
import type { QueryFilter } from './query-filter.js';

/**
 * The catalog port: where file records live. Adapters (sqlite, postgres) implement it;
 * the service only ever sees this interface.
 */
export interface Catalog {
  /** Inserts a record unless one with the same file_path exists. Idempotent. */
  insert(record: FileRecord): Promise<'inserted' | 'exists'>;
  get(filePath: string): Promise<FileRecord | undefined>;
  /** Matching records ordered by file_path, fetched a page at a time (flat memory). */
  query(filter: QueryFilter): AsyncIterable<FileRecord>;
  /** Every file_path, in order, a page at a time: for reconcile. */
  paths(): AsyncIterable<string>;
  /** Cheap liveness check for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
