import { resolveRequestPath } from '../mission/index.js';
import type { StagedUpload } from '../store/index.js';
import { ingest } from './ingest.js';
import type { ServiceContext } from './service-context.js';

/**
 * What became of a staged upload. `indexed`: promoted to its name and recorded.
 * `exists`: its name already held these bytes, or it had been promoted already.
 * `refused`: its name held another file, which stays; this upload was removed.
 * `skipped`: it names no valid stored path (left for the lifecycle rule). `absent`:
 * gone, and nothing stored under its name.
 */
export type StagedResult = 'indexed' | 'exists' | 'refused' | 'skipped' | 'absent';

/**
 * Promotes one staged upload to the key it names with a write that refuses to replace
 * (the store's `promote`), then records it through the one idempotent ingest, with the
 * size and SHA-256 of the bytes written under the real key and the uploader the upload
 * address carried. A loser of a race is logged and reported, never stored.
 */
export async function ingestStaged(ctx: ServiceContext, upload: StagedUpload): Promise<StagedResult> {
  const staging = ctx.store.staging;
  const resolved = resolveRequestPath(upload.key, ctx.mission);
  if (!staging || resolved.kind !== 'file' || resolved.path !== upload.key) {
    ctx.log.warn({ key: upload.stagingKey }, 'staged upload does not name a valid stored path; not promoted');
    return 'skipped';
  }
  // A record describes the bytes under its key: never put other bytes there, even if its object went missing.
  if ((await ctx.catalog.get(upload.key)) && !(await ctx.store.head(upload.key))) {
    ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload not promoted: the name has a record (its object is missing)');
    return 'refused';
  }
  const promotion = await staging.promote(upload);
  switch (promotion.outcome) {
    case 'promoted': {
      const result = await ingest(ctx, upload.key, promotion.digest, promotion.digest.uploader);
      return result === 'indexed' ? 'indexed' : 'exists';
    }
    case 'refused':
      ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'upload refused: the name already holds another file, which stays; the upload was removed');
      await ingest(ctx, upload.key);
      return 'refused';
    case 'duplicate':
    case 'absent':
      if (!(await ctx.store.head(upload.key))) return 'absent';
      await ingest(ctx, upload.key);
      return 'exists';
  }
}

/**
 * Promotes the uploads waiting for one name, oldest first (the first wins), so a request
 * for the name finds it stored even when the store's notification never came. True when
 * the name then holds an object. A no-op on stores without staging.
 */
export async function ingestStagedFor(ctx: ServiceContext, key: string): Promise<boolean> {
  const staging = ctx.store.staging;
  if (!staging) return false;
  let stored = false;
  for await (const upload of staging.listStaged(key)) {
    const result = await ingestStaged(ctx, upload);
    if (result === 'indexed' || result === 'exists' || result === 'refused') stored = true;
  }
  return stored;
}

/** Every waiting upload, for reconcile: counts of those indexed and refused. */
export async function ingestAllStaged(ctx: ServiceContext): Promise<{ indexed: number; refused: number }> {
  let indexed = 0;
  let refused = 0;
  for await (const upload of ctx.store.staging?.listStaged() ?? []) {
    const result = await ingestStaged(ctx, upload);
    if (result === 'indexed') indexed++;
    else if (result === 'refused') refused++;
  }
  return { indexed, refused };
}
