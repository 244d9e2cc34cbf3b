import { recordFor } from '../catalog/index.js';
import { resolveRequestPath } from '../mission/index.js';
import type { ObjectDigest } from '../store/index.js';
import type { ServiceContext } from './service-context.js';

export type IngestResult = 'indexed' | 'exists' | 'skipped';

/**
 * Indexes a stored object: the one way a record comes to be. Idempotent: a key
 * that already has a record is left alone. A key that is not a canonical stored
 * path of a valid name is skipped (and logged), so the catalog never holds a record
 * whose name breaks the rules. The digest is computed from the bytes when the
 * caller did not compute it while they streamed in. `uploader` is the API key's
 * name the upload address was made for, when there was one.
 */
export async function ingest(ctx: ServiceContext, key: string, digest?: ObjectDigest, uploader?: string): Promise<IngestResult> {
  const resolved = resolveRequestPath(key, ctx.mission);
  if (resolved.kind !== 'file' || resolved.path !== key) {
    ctx.log.warn({ key }, 'ingest: object key is not a valid stored path; not indexed');
    return 'skipped';
  }
  const existing = await ctx.catalog.get(key);
  // A reader may have indexed the file first, without an uploader: the insert fills it in.
  if (existing && (uploader === undefined || existing.uploader !== undefined)) return 'exists';
  const digested = digest ?? (await ctx.store.digest(key));
  const { size, sha256 } = digested;
  // S3 keeps the uploader with the object (x-amz-meta-uploader), whoever indexes it.
  uploader ??= digested.uploader;
  const record = recordFor(resolved.name, { ingestion_date: new Date().toISOString(), size, sha256, uploader });
  const result = await ctx.catalog.insert(record);
  if (result === 'inserted') ctx.log.info({ file_path: key, size, sha256, uploader }, 'indexed');
  return result === 'inserted' ? 'indexed' : 'exists';
}
