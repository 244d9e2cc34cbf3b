import { resolveRequestPath } from '../mission/index.js';
import type { Promotion, StagedUpload, StagingArea, WriteGuard } from '../store/index.js';
import type { MaybePromise } from './maybe-async.js';
import { ingest } from './ingest.js';
import { LONG_LEASE_WAIT_MS, NOT_HELD, SHORT_LEASE_WAIT_MS, underNameLease } from './name-lease.js';
import type { ServiceContext } from './service-context.js';

/**
 * What became of a staged upload. `indexed`: promoted to its name and recorded.
 * `exists`: its name already held these bytes, or it had been promoted already.
 * `refused`: its name held another file, which stays; this upload was removed.
 * `skipped`: it names no valid stored path (left for the lifecycle rule). `absent`:
 * gone, and nothing stored under its name (also an upload whose bytes were not those its
 * address was bound to: removed). `deferred`: another promotion of the name held
 * its lease (or this one lost it while writing); the upload stays for a later try (the next
 * notification, request for the name, or reconcile).
 */
export type StagedResult = 'indexed' | 'exists' | 'refused' | 'skipped' | 'absent' | 'deferred';

/**
 * Promotes one staged upload to the key it names, holding the name's lease in the catalog
 * (so no other promotion writes the name meanwhile) and with a write that refuses to replace
 * (the store's `promote`), then records it through the one idempotent ingest, with the
 * size and SHA-256 of the bytes written under the real key and the uploader the upload
 * address carried, before the lease is released. A loser of a race is logged and reported,
 * never stored. Waits up to `waitMs` for a lease another holds.
 */
export async function ingestStaged(ctx: ServiceContext, upload: StagedUpload, waitMs = SHORT_LEASE_WAIT_MS): Promise<StagedResult> {
  const resolved = resolveRequestPath(upload.key, ctx.mission);
  const staging = ctx.store.staging;
  if (!staging || resolved.kind !== 'file' || resolved.path !== upload.key) {
    ctx.log.warn({ key: upload.stagingKey }, 'staged upload does not name a valid stored path; not promoted');
    return 'skipped';
  }
  // While another holds the name: if the name gets stored meanwhile, this upload has lost, which
  // needs no lease to settle (the promotion, given no hold, removes it and writes nothing).
  const lostMeanwhile = async () => {
    const promotion = await staging.promote(upload, NOT_HELD, KEEP_UNTIL_RECORDED);
    return promotion.outcome === 'interrupted' ? undefined : promotion;
  };
  const run = await underNameLease(ctx, upload.key, waitMs, (guard) => promoteHeld(ctx, upload, guard), lostMeanwhile);
  if (!run.held && run.settled) return afterPromotion(ctx, upload, run.settled);
  if (!run.held) {
    ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload left waiting: another promotion of the name holds its lease; a later request, notification or reconcile promotes it');
    return 'deferred';
  }
  return run.value;
}

/** A staged upload's promotion and record, the name's lease being held (`guard`). */
async function promoteHeld(ctx: ServiceContext, upload: StagedUpload, guard: WriteGuard): Promise<StagedResult> {
  const staging = ctx.store.staging!;
  // A record describes the bytes under its key: never put other bytes there, even if its object went missing.
  if ((await ctx.catalog.has(upload.key)) && !(await ctx.store.head(upload.key))) {
    ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload not promoted: the name has a record (its object is missing)');
    return 'refused';
  }
  return afterPromotion(ctx, upload, await staging.promote(upload, guard, KEEP_UNTIL_RECORDED));
}

/**
 * The staged object stays until the record of its bytes is committed, then goes (discard): a
 * crash or a catalog outage in between leaves it waiting, and the next notification, request or
 * sweep finds the name holding its bytes and indexes them. So "stored" never outlives the
 * knowledge that a record is owed (docs/reliability.md, *Acknowledged means findable*).
 */
const KEEP_UNTIL_RECORDED = { keepStaged: true } as const;

/** The record a promotion calls for, and what became of the upload. */
async function afterPromotion(ctx: ServiceContext, upload: StagedUpload, promotion: Promotion): Promise<StagedResult> {
  switch (promotion.outcome) {
    case 'promoted': {
      const result = await ingest(ctx, upload.key, promotion.digest, promotion.digest.uploader);
      await ctx.store.staging!.discard(upload);
      return result === 'indexed' ? 'indexed' : 'exists';
    }
    case 'refused':
      ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'upload refused: the name already holds another file, which stays; the upload was removed');
      await ingest(ctx, upload.key);
      return 'refused';
    case 'mismatch':
      // Not the bytes its address was bound to: removed, the name stays free (docs/api.md, "Checked transfers").
      ctx.log.warn(
        { file_path: upload.key, staging_key: upload.stagingKey, declared_sha256: promotion.declared, received_sha256: promotion.received },
        'upload refused: its bytes are not those its address was bound to; the upload was removed and the name stays free',
      );
      return 'absent';
    case 'interrupted':
      ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload not promoted: the lease on its name was lost while writing; it stays for a later try');
      return 'deferred';
    case 'duplicate':
    case 'absent': {
      if (!(await ctx.store.head(upload.key))) return 'absent';
      // The bytes are under the name already (an earlier promotion, cut before its record): the
      // record comes from them, with the uploader and ingestion date kept with them.
      const result = await ingest(ctx, upload.key);
      if (promotion.outcome === 'duplicate') await ctx.store.staging!.discard(upload);
      return result === 'indexed' ? 'indexed' : 'exists';
    }
  }
}

/**
 * What the uploads waiting for a name came to: `stored` when the name then holds an object,
 * `busy` when one of them was left waiting for the name's lease (another promotion is writing
 * the name), `free` otherwise.
 */
export type NameState = 'stored' | 'busy' | 'free';

/**
 * Promotes the uploads waiting for one name, oldest first (the first wins), so a request
 * for the name finds it stored even when the store's notification never came. A caller that
 * holds the name's lease already passes its `guard`. A no-op on stores without staging,
 * answered at once.
 */
export function ingestStagedFor(ctx: ServiceContext, key: string, guard?: WriteGuard): MaybePromise<NameState> {
  return ctx.store.staging ? promoteWaiting(ctx, ctx.store.staging, key, guard) : 'free';
}

async function promoteWaiting(ctx: ServiceContext, staging: StagingArea, key: string, guard?: WriteGuard): Promise<NameState> {
  let state: NameState = 'free';
  for await (const upload of staging.listStaged(key)) {
    const result = guard ? await promoteHeld(ctx, upload, guard) : await ingestStaged(ctx, upload);
    if (result === 'indexed' || result === 'exists' || result === 'refused') state = 'stored';
    else if (result === 'deferred' && state === 'free') state = 'busy';
  }
  return state;
}

/** Every waiting upload, for reconcile: counts of those indexed, refused and left waiting. */
export async function ingestAllStaged(ctx: ServiceContext): Promise<{ indexed: number; refused: number; deferred: number }> {
  let indexed = 0;
  let refused = 0;
  let deferred = 0;
  for await (const upload of waitingUploads(ctx)) {
    const result = await ingestStaged(ctx, upload, LONG_LEASE_WAIT_MS);
    if (result === 'indexed') indexed++;
    else if (result === 'refused') refused++;
    else if (result === 'deferred') deferred++;
  }
  return { indexed, refused, deferred };
}

/**
 * Every upload waiting to be promoted: staged single PUTs, then uploads in parts the store
 * joined whose completion did not record them (cut by a crash). Both are promoted alike.
 */
export async function* waitingUploads(ctx: ServiceContext): AsyncIterable<StagedUpload> {
  if (!ctx.store.staging) return;
  yield* ctx.store.staging.listStaged();
  yield* ctx.store.multipart?.listAssembled?.() ?? [];
}
