import { recordFor, type FileRecord } from '../catalog/index.js';
import { accessPolicyOf, releaseDateAtIngest, resolveRequestPath, type ScienceFileName } from '../mission/index.js';
import type { ObjectDigest } from '../store/index.js';
import { ingestionStamp } from '../wire/instant.js';
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
  // Bytes just written (a PUT, a promotion, a completion in parts) come with their digest.
  if (digest !== undefined && ctx.activity) ctx.activity.stored++;
  const record = await recordToIngest(ctx, key, digest, uploader);
  if (typeof record === 'string') return record;
  const result = await ctx.catalog.insert(record);
  if (result === 'inserted') logIndexed(ctx, record);
  return result === 'inserted' ? 'indexed' : 'exists';
}

/**
 * What ingest would insert for a stored object: its record, or why there is none (the key
 * breaks the rules, or has a record already that needs nothing).
 */
export async function recordToIngest(ctx: ServiceContext, key: string, digest?: ObjectDigest, uploader?: string): Promise<FileRecord | 'exists' | 'skipped'> {
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
  // The store keeps the uploader and the ingestion date with the bytes (S3 metadata, the local
  // store's note beside the file), so whoever indexes them, and a catalog rebuilt from the
  // store, records the same ones.
  uploader ??= digested.uploader;
  const ingestion_date = digested.ingestionDate ?? ingestionStamp();
  const release_date = policyReleaseDate(ctx, resolved.name, ingestion_date);
  return recordFor(resolved.name, { ingestion_date, size, sha256, uploader, release_date });
}

/**
 * The release date the mission's access policy gives a file of this name indexed at
 * `ingestionDate`: decided here, once, for every path that indexes, and for bytes served while
 * their record cannot be written (download.ts) (docs/api.md "Who sees what").
 */
export function policyReleaseDate(ctx: ServiceContext, name: ScienceFileName, ingestionDate: string): string | undefined {
  const { instrument, dataLevel: data_level, descriptor, extension } = name;
  return releaseDateAtIngest(accessPolicyOf(ctx.mission), { instrument, data_level, descriptor, extension }, ingestionDate);
}

/**
 * Records made by recordToIngest, inserted together (one insertMany: the catalog's bulk path);
 * each counts and is logged as ingest would. When some paths got a record meanwhile (another
 * writer), each of these is looked at on its own: indexed if the stored record is ours, and
 * otherwise given to insert, which fills a missing uploader as ingest's insert does.
 * Returns how many were indexed.
 */
export async function ingestRecords(ctx: ServiceContext, records: readonly FileRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const inserted = await ctx.catalog.insertMany(records);
  if (inserted === records.length) {
    for (const record of records) logIndexed(ctx, record);
    return inserted;
  }
  let indexed = 0;
  for (const record of records) {
    const stored = await ctx.catalog.get(record.file_path);
    if (stored && stored.ingestion_date === record.ingestion_date && stored.sha256 === record.sha256 && stored.size === record.size) {
      indexed++;
      logIndexed(ctx, record);
    } else if (record.uploader !== undefined) {
      await ctx.catalog.insert(record);
    }
  }
  return indexed;
}

function logIndexed(ctx: ServiceContext, { file_path, size, sha256, uploader }: FileRecord): void {
  if (ctx.activity) ctx.activity.indexed++;
  ctx.log.info({ file_path, size, sha256, uploader }, 'indexed');
}
