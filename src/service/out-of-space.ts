import { LOW_SPACE, OUT_OF_SPACE, ServerError } from '../errors/index.js';
import type { ObjectStore } from '../store/index.js';

/**
 * Disk full, wherever it is met: the store's file system (ENOSPC, or EDQUOT past a
 * quota), SQLite (SQLITE_FULL) or PostgreSQL (SQLSTATE 53100 disk_full).
 */
export function isOutOfSpace(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e !== 'object') return false;
    const code = e.code;
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === '53100') return true;
    if (typeof code === 'string' && code.startsWith('SQLITE_FULL')) return true;
  }
  return false;
}

/** The archive cannot take this file now: 507, with nothing of it kept. */
export class OutOfSpaceError extends ServerError {
  override name = 'OutOfSpaceError';
  constructor(path: string, cause?: unknown) {
    super(OUT_OF_SPACE.code, OUT_OF_SPACE.statusCode, OUT_OF_SPACE.message(path), {}, { cause });
  }
}

/**
 * The free-space watermark (docs/deploy.md "Free space"): while the store's free space is under
 * it, a new upload of `path` is refused (507) before any byte is taken, on the upload address,
 * the opening of an upload in parts and the local store's PUT alike. Stores without a disk of
 * their own (S3) are never refused here.
 */
export function lowSpaceRefusal(store: Pick<ObjectStore, 'space'>, path: string): ServerError | undefined {
  return store.space?.reading()?.low ? LOW_SPACE.create(path) : undefined;
}
