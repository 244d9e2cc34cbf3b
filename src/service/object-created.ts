import { eventBridgeObjects, isEventBridgeS3Event } from './eventbridge-object-created.js';
import { resolveRequestPath } from '../mission/index.js';
import { ingest } from './ingest.js';
import { isS3Notification, s3NotificationObjects, type CreatedObject } from './s3-notification.js';
import type { ServiceContext } from './service-context.js';
import { promoteUpload } from './promotion.js';
import type { StagedUpload } from '../store/index.js';
import { SWEEP_MIN_AGE_MS } from './ingest-sweep.js';

/** What became of each object an event announced. */
export interface ObjectCreatedReport {
  readonly indexed: string[];
  /** Already had a record (S3 delivers an event at least once), or a promotion that wrote it is recording it. */
  readonly exists: string[];
  /** Keys that break the naming rules or can never be a stored path (`..`, empty segments...): logged at warn, not indexed. */
  readonly skipped: string[];
  /** Not in this service's store (another bucket, or deleted since): `sdc reconcile` will agree. */
  readonly absent: string[];
  /** Uploads (S3 staging keys) of a name that already held another file, which stays: the upload was removed. */
  readonly refused: string[];
  /** Uploads (S3 staging keys) left waiting: another promotion of the name held its lease. A later request, notification or reconcile promotes them. */
  readonly deferred: string[];
  /** Records of other kinds (removals, test events). */
  readonly ignored: number;
}

export type ParsedEvent = { readonly ok: true; readonly created: CreatedObject[]; readonly ignored: number } | { readonly ok: false; readonly message: string };

/** Reads either shape of an S3 object-created event. */
export function parseObjectCreatedEvent(event: unknown): ParsedEvent {
  if (isS3Notification(event)) return { ok: true, ...s3NotificationObjects(event) };
  if (isEventBridgeS3Event(event)) return { ok: true, ...eventBridgeObjects(event) };
  // S3 sends {"Event": "s3:TestEvent"} when a notification is configured.
  if (typeof event === 'object' && event !== null && (event as { Event?: unknown }).Event === 's3:TestEvent') {
    return { ok: true, created: [], ignored: 1 };
  }
  return {
    ok: false,
    message:
      'Expected an S3 event notification ({"Records": [{"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": ...}, "object": {"key": ...}}}]}) or an EventBridge "Object Created" event from aws.s3.',
  };
}

/**
 * An event of a real key that needs no store request: the key has a record already (a
 * notification sent again, or sent after the promotion recorded it), or it announces a
 * promotion's own write of the key (its metadata says so: RGW's events carry it) while a
 * promotion holds the name's lease. That promotion records the bytes before it discards the
 * waiting upload, and a crash in between leaves the upload for the sweep, which records them
 * (promotion.ts, step 5); a HEAD and a GET here would only hash the same bytes again
 * (docs/performance.md, "Fewer requests per upload").
 */
async function recordedOrBeingRecorded(ctx: ServiceContext, key: string, metadata: Readonly<Record<string, string>> | undefined): Promise<boolean> {
  if (metadata && ctx.store.staging?.writtenByPromotion(metadata) && (await ctx.catalog.leases().held(key))) return true;
  return ctx.catalog.has(key);
}

/**
 * A late event of an upload (created more than SWEEP_MIN_AGE_MS ago, by the store's clock) that
 * the sweep or a request for its name has promoted already: the name has a record and the
 * staging key holds nothing. One statement and one HEAD tell it, where a promotion would take the
 * name's lease, GET the gone upload, HEAD the name and read its record. A persistent topic
 * delivers most events that late (docs/performance.md, "double promotions"). A loser still
 * waiting is settled by the promotion, as ever; a timely event goes straight to it.
 */
async function promotedAlready(ctx: ServiceContext, upload: StagedUpload, eventTime: Date | undefined): Promise<boolean> {
  if (eventTime === undefined || Date.now() - eventTime.getTime() < SWEEP_MIN_AGE_MS) return false;
  return (await ctx.catalog.has(upload.key)) && !(await ctx.store.staging!.isWaiting(upload));
}

/**
 * Indexes the objects an event announced, through the one idempotent ingest. An
 * object is looked up in the store first, so only bytes this service holds are indexed.
 */
export async function ingestCreatedObjects(ctx: ServiceContext, created: readonly CreatedObject[], ignored = 0): Promise<ObjectCreatedReport> {
  const report: ObjectCreatedReport = { indexed: [], exists: [], skipped: [], absent: [], refused: [], deferred: [], ignored };
  for (const { key, metadata, eventTime } of created) {
    // An upload under a staging key: promoted to its name unless that holds a file already.
    const staged = ctx.store.staging?.stagedUpload(key);
    if (staged) {
      report[(await promotedAlready(ctx, staged, eventTime)) ? 'exists' : await promoteUpload(ctx, staged)].push(staged.key);
      continue;
    }
    // A key that can never be a stored path (`..`, empty or dot segments, NUL, a name that
    // breaks the rules) is skipped before the store is asked: it cannot fail the batch.
    const resolved = resolveRequestPath(key, ctx.mission);
    if (resolved.kind !== 'file' || resolved.path !== key) {
      ctx.log.warn({ key: key.slice(0, 1024) }, 'object-created event: object key is not a valid stored path; not indexed');
      report.skipped.push(key);
      continue;
    }
    if (await recordedOrBeingRecorded(ctx, key, metadata)) {
      report.exists.push(key);
      continue;
    }
    if (!(await ctx.store.head(key))) {
      ctx.log.warn({ key }, 'object-created event: object not in the store; not indexed');
      report.absent.push(key);
      continue;
    }
    const result = await ingest(ctx, key);
    (result === 'indexed' ? report.indexed : result === 'exists' ? report.exists : report.skipped).push(key);
  }
  return report;
}
