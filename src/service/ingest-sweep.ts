import { runPool } from '../concurrency/run-pool.js';
import { unavailableError } from '../errors/index.js';
import type { StagedUpload } from '../store/index.js';
import { startBackgroundStep, type BackgroundStep } from './background-step.js';
import { reconcile } from './reconcile.js';
import type { ServiceContext } from './service-context.js';
import { promoteUpload, waitingUploads } from './promotion.js';

/**
 * An upload waiting this long under a staging key has missed its notification (lost, sent to an
 * instance that died, or refused while the catalog was down): the sweep promotes it. Younger ones
 * are left to their notification, which is usually on its way.
 */
export const SWEEP_MIN_AGE_MS = 5_000;

/** Promotions a sweep runs at once: a backlog left by an outage clears in seconds, without crowding the pool. */
const PROMOTIONS_IN_FLIGHT = 4;

/** What one sweep saw and did. */
export interface SweepReport {
  /** Uploads that were promoted and indexed, or found indexed already. */
  readonly indexed: number;
  /** Uploads still waiting after the sweep (too young, their name's lease held, or their promotion failed). */
  readonly waiting: number;
  /** Age of the oldest upload still waiting, seconds (0 when none). */
  readonly oldestSeconds: number;
}

/**
 * One pass over the uploads waiting under staging keys, and the joined uploads in parts whose
 * completion was cut before its record (a crash): each older than SWEEP_MIN_AGE_MS is
 * promoted and indexed through the one ingest, under its name's lease, so sweeps of several
 * instances, notifications and `sdc reconcile` can run at once without two writing a name.
 * The backlog it leaves is published on `ctx.activity` (/metrics, /readyz). A no-op on stores
 * without staging (the local store indexes at PUT time).
 */
export async function sweepStaged(ctx: ServiceContext, now = Date.now): Promise<SweepReport> {
  let indexed = 0;
  let waiting = 0;
  let oldest = 0;
  const staging = ctx.store.staging;
  const stillWaiting = (age: number) => {
    waiting++;
    oldest = Math.max(oldest, age);
  };
  const sweepOne = async (upload: StagedUpload, age: number) => {
    // A name whose lease another holds (a notification, another instance's sweep) is passed
    // over at once: its holder promotes it, or the next sweep does once the lease expires.
    let result;
    try {
      result = await promoteUpload(ctx, upload, 0);
    } catch (err) {
      // A dependency down fails every upload alike: the pass stops and the next tick tries again.
      if (unavailableError(err)) throw err;
      // One upload's own failure (a refused write, a bad object) never holds up the others behind it.
      ctx.log.warn({ err, file_path: upload.key, staging_key: upload.stagingKey }, 'sweep: this upload could not be promoted; the others go on, it is tried again next pass');
      result = 'deferred' as const;
    }
    if (result === 'indexed' || result === 'exists') indexed++;
    else if (result === 'deferred') stillWaiting(age);
  };
  if (staging) {
    // runPool stops taking uploads at the first failure it is thrown (only an outage, above),
    // awaits the promotions under way and throws it: the ticker logs it and tries again at the next tick.
    await runPool(waitingUploads(ctx), PROMOTIONS_IN_FLIGHT, async (upload) => {
      const age = upload.storedAt ? now() - upload.storedAt.getTime() : SWEEP_MIN_AGE_MS;
      if (age < SWEEP_MIN_AGE_MS) stillWaiting(age);
      else await sweepOne(upload, age);
    });
  }
  const report = { indexed, waiting, oldestSeconds: Math.round(oldest / 1000) };
  if (ctx.activity) ctx.activity.backlog = { count: waiting, oldestSeconds: report.oldestSeconds, checkedAt: now() };
  if (indexed > 0) ctx.log.warn({ indexed }, 'sweep: indexed uploads whose notification had not come');
  return report;
}

/**
 * How often, at most, the sweep also lists the whole store for objects without records (written
 * there by another path than an upload address, or left by a crash on the local store): it costs
 * a listing and a catalog scan, so it is rare; staged uploads are swept every interval.
 */
const FULL_PASS_EVERY_MS = 10 * 60_000;

/**
 * Runs the repair a server owes in the background, never before it listens: first the
 * start-up reconcile (objects a crash left without records), then a sweep of staged uploads
 * every `intervalMs`, and a full pass for objects without records every `fullEvery` sweeps.
 * A pass that fails (a dependency down) is logged and tried again at the next tick; passes
 * never overlap.
 */
export function startIngestSweeper(ctx: ServiceContext, intervalMs: number, fullEvery = Math.max(1, Math.round(FULL_PASS_EVERY_MS / Math.max(intervalMs, 1)))): BackgroundStep {
  let tick = 0;
  const pass = async () => {
    const full = tick % fullEvery === 0;
    tick++;
    try {
      // Staged uploads first: that pass never waits on a lease, the full one may.
      await sweepStaged(ctx);
      if (full) {
        const report = await reconcile(ctx, { checkRecords: false });
        ctx.log.info({ indexed: report.indexed, skipped: report.skipped, deferred: report.deferred }, 'indexed objects that had no record');
      }
    } catch (err) {
      ctx.log.warn({ err }, 'sweep failed; it runs again shortly');
      // The start-up reconcile is owed until it succeeds.
      if (full) tick = 0;
    }
  };
  return startBackgroundStep(pass, { intervalMs, runAtOnce: true });
}
