import { resolveRequestPath } from '../mission/index.js';
import type { Promotion, StagedUpload, StagingArea, WriteGuard } from '../store/index.js';
import type { MaybePromise } from './maybe-async.js';
import { ingest } from './ingest.js';
import { LONG_LEASE_WAIT_MS, NOT_HELD, SHORT_LEASE_WAIT_MS, underNameLease } from './name-lease.js';
import type { ServiceContext } from './service-context.js';

/**
 * Promotion: how an upload waiting in the store (S3: a single PUT under its staging key, or an
 * upload in parts joined under its assembly key) becomes the file under its name, and its record.
 * One step, `promoteUpload`, read top to bottom:
 *
 * 1. the upload must name a valid stored path (else `skipped`, left to the lifecycle rule);
 * 2. the name's lease in the catalog is taken (name-lease.ts), so no other promotion writes the
 *    name meanwhile; while another holds it, a name stored meanwhile settles this upload as the loser;
 * 3. a name whose record has lost its object takes no other bytes;
 * 4. the store moves the bytes: `StagingArea.promote` (src/store/s3/s3-staging.ts), its checks
 *    (the key free, the declared digest) and a write that refuses to replace, hashing the bytes;
 * 5. the record, through the one ingest, with the size, SHA-256 and uploader of the bytes written;
 *    only then is the waiting object discarded, so a kill in between leaves it for the sweep,
 *    which finds the name holding its bytes (`duplicate`) and records them.
 *
 * Who promotes, and what: the ingest sweep and reconcile, every waiting upload (ingest-sweep.ts,
 * reconcile.ts); the S3 event route and the ingest Lambda, the upload an event names
 * (object-created.ts); a request that must decide whether one name is taken or stored
 * (`GET /upload`, `POST /uploads` and a completion: upload.ts, multipart-upload.ts; `GET /download`:
 * download.ts), the uploads waiting for that name only (`promoteWaitingFor`). No request promotes
 * an upload of another name. A completion's own joined object is promoted by the store's `complete`.
 */

/**
 * What became of a waiting upload. `indexed`: promoted to its name and recorded.
 * `exists`: its name already held these bytes, or it had been promoted already.
 * `refused`: its name held another file, which stays; this upload was removed.
 * `skipped`: it names no valid stored path (left for the lifecycle rule). `absent`:
 * gone, and nothing stored under its name (also an upload whose bytes were not those its
 * address was bound to: removed). `deferred`: another promotion of the name held
 * its lease (or this one lost it while writing); the upload stays for a later try (the next
 * notification, request for the name, sweep or reconcile).
 */
export type PromotionResult = 'indexed' | 'exists' | 'refused' | 'skipped' | 'absent' | 'deferred';

/**
 * The promotion of one waiting upload (steps 1 to 5 above). Waits up to `waitMs` for a lease
 * another holds. A loser of a race is logged and reported, never stored.
 */
export async function promoteUpload(ctx: ServiceContext, upload: StagedUpload, waitMs = SHORT_LEASE_WAIT_MS): Promise<PromotionResult> {
  // 1. A valid stored path.
  const resolved = resolveRequestPath(upload.key, ctx.mission);
  const staging = ctx.store.staging;
  if (!staging || resolved.kind !== 'file' || resolved.path !== upload.key) {
    ctx.log.warn({ key: upload.stagingKey }, 'staged upload does not name a valid stored path; not promoted');
    return 'skipped';
  }
  // 2. The name's lease. While another holds it: if the name gets stored meanwhile, this upload
  // has lost, which needs no lease to settle (the store's promotion, given no hold, removes it and writes nothing).
  const lostMeanwhile = async () => {
    const promotion = await staging.promote(upload, NOT_HELD, KEEP_UNTIL_RECORDED);
    return promotion.outcome === 'interrupted' ? undefined : promotion;
  };
  const run = await underNameLease(ctx, upload.key, waitMs, (guard) => promoteHeld(ctx, upload, guard), lostMeanwhile);
  if (!run.held && run.settled) return recordAfter(ctx, upload, run.settled);
  if (!run.held) {
    ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload left waiting: another promotion of the name holds its lease; a later request, notification or sweep promotes it');
    return 'deferred';
  }
  return run.value;
}

/** Steps 3 to 5, the name's lease being held (`guard`). */
async function promoteHeld(ctx: ServiceContext, upload: StagedUpload, guard: WriteGuard): Promise<PromotionResult> {
  // 3. A record describes the bytes under its key: never put other bytes there, even if its object went missing.
  if ((await ctx.catalog.has(upload.key)) && !(await ctx.store.head(upload.key))) {
    ctx.log.warn({ file_path: upload.key, staging_key: upload.stagingKey }, 'staged upload not promoted: the name has a record (its object is missing)');
    return 'refused';
  }
  // 4. The store moves the bytes.
  return recordAfter(ctx, upload, await ctx.store.staging!.promote(upload, guard, KEEP_UNTIL_RECORDED));
}

/**
 * The waiting object stays until the record of its bytes is committed, then goes (discard): a
 * crash or a catalog outage in between leaves it waiting, and the next notification, request or
 * sweep finds the name holding its bytes and indexes them. So "stored" never outlives the
 * knowledge that a record is owed (docs/reliability.md, *Acknowledged means findable*).
 */
const KEEP_UNTIL_RECORDED = { keepStaged: true } as const;

/** 5. The record the store's promotion calls for, then the waiting object discarded; what became of the upload. */
async function recordAfter(ctx: ServiceContext, upload: StagedUpload, promotion: Promotion): Promise<PromotionResult> {
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
 * Promotes the uploads waiting for one name, and no other, oldest first (the first wins): for a
 * request that must know whether that name is taken or stored, even when the store's
 * notification never came. A caller that holds the name's lease already passes its `guard`.
 * A no-op on stores without staging, answered at once.
 */
export function promoteWaitingFor(ctx: ServiceContext, key: string, guard?: WriteGuard): MaybePromise<NameState> {
  return ctx.store.staging ? promoteEachFor(ctx, ctx.store.staging, key, guard) : 'free';
}

async function promoteEachFor(ctx: ServiceContext, staging: StagingArea, key: string, guard?: WriteGuard): Promise<NameState> {
  let state: NameState = 'free';
  for await (const upload of staging.listStaged(key)) {
    const result = guard ? await promoteHeld(ctx, upload, guard) : await promoteUpload(ctx, upload);
    if (result === 'indexed' || result === 'exists' || result === 'refused') state = 'stored';
    else if (result === 'deferred' && state === 'free') state = 'busy';
  }
  return state;
}

/** Every waiting upload, for reconcile: counts of those indexed, refused and left waiting. */
export async function promoteAllWaiting(ctx: ServiceContext): Promise<{ indexed: number; refused: number; deferred: number }> {
  let indexed = 0;
  let refused = 0;
  let deferred = 0;
  for await (const upload of waitingUploads(ctx)) {
    const result = await promoteUpload(ctx, upload, LONG_LEASE_WAIT_MS);
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
