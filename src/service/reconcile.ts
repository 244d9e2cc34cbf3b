import type { FileRecord } from '../catalog/index.js';
import { ingestRecords, recordToIngest } from './ingest.js';
import { promoteAllWaiting } from './promotion.js';
import type { ServiceContext } from './service-context.js';

export interface ReconcileReport {
  /** Objects that had no record and were indexed (uploads waiting under staging keys included). */
  readonly indexed: number;
  /** Staged uploads of names that already held another file: removed, the stored file kept. */
  readonly refused: number;
  /** Staged uploads left waiting: another promotion held their name's lease; a later run promotes them. */
  readonly deferred: number;
  /** Objects whose keys break the naming rules: left alone, not indexed. */
  readonly skipped: number;
  /** Records whose object is missing from the store: reported, never deleted (empty when `onMissing` took them). */
  readonly missing: readonly string[];
  /** Entries the store refused to read (the local store: symbolic links): reported, never followed nor indexed. */
  readonly refusedLinks: number;
  /** Entries that are no regular file (the local store: a FIFO, socket or device): reported, never opened nor indexed; absent when none. */
  readonly notRegularFiles?: number;
}

export interface ReconcileOptions {
  /**
   * Also look up, with a HEAD, each record that has no object in the listing. Off at
   * server start (records without objects are `sdc reconcile`'s job); on by default.
   */
  readonly checkRecords?: boolean;
  /** Hears of every step. */
  readonly onProgress?: (progress: ReconcileProgress) => void;
  /**
   * Takes each record without an object as it is found, instead of the report
   * collecting them: a catalog that lost its whole store then costs no memory.
   */
  readonly onMissing?: (path: string) => void;
}

/** How far a reconcile run has come. */
export interface ReconcileProgress {
  /** Objects listed and records read so far. */
  readonly objects: number;
  readonly records: number;
  readonly indexed: number;
  readonly skipped: number;
  readonly missing: number;
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * New records are inserted together, at most this many at once (one bulk insert, one
 * transaction), or what came in the last INDEX_EVERY_MS: a run that digests slowly still
 * indexes as it goes, and a crash loses at most that much of its work (the next run redoes it).
 */
const INDEX_BATCH = 1000;
const INDEX_EVERY_MS = 1000;

/**
 * Objects without a record that are read and digested at once. One at a time, a run waited
 * on each GET's round trip (S3) or each file's open, read and close (local disk) with nothing
 * else to do; with several in flight those waits overlap each other and the hashing. Below
 * the AWS SDK's 50 sockets, so S3 requests never queue for one. Each in flight holds only its
 * stream's buffer, so memory stays bounded.
 */
export const DIGESTS_IN_FLIGHT = 32;

/**
 * Brings store and catalog into agreement: every object gets a record; records
 * without objects are reported. Both sides are read in key order, a page at a time,
 * and merged, so a run costs a listing and a catalog scan rather than a lookup per
 * object and per record. Only the disagreements are looked at each on its own: an object
 * without a record goes through the idempotent ingest (up to DIGESTS_IN_FLIGHT of them
 * read at once), and a record without an
 * object is checked with a HEAD before it is reported (the object may have arrived
 * during the run). So the result is right even if a backend lists out of order, and
 * the run is safe beside running servers.
 */
export async function reconcile(ctx: ServiceContext, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  let objects = 0;
  let records = 0;
  let indexed = 0;
  let skipped = 0;
  let missingCount = 0;
  const missing: string[] = [];
  const firstMissing: string[] = [];
  const report = () => options.onProgress?.({ objects, records, indexed, skipped, missing: missingCount });

  const catalogPaths = ctx.catalog.paths()[Symbol.asyncIterator]();
  let record = await catalogPaths.next();
  const nextRecord = async () => {
    records++;
    record = await catalogPaths.next();
  };
  const checkRecord = async (path: string) => {
    // A withdrawn file's bytes may have been purged (`sdc purge`): its record alone is expected.
    if (options.checkRecords !== false && !(await ctx.store.head(path)) && (await ctx.catalog.get(path))?.status !== 'withdrawn') {
      missingCount++;
      if (firstMissing.length < 10) firstMissing.push(path);
      if (options.onMissing) options.onMissing(path);
      else missing.push(path);
    }
    await nextRecord();
    report();
  };

  // Uploads waiting under staging keys (S3) first: promoted, they are then listed as objects.
  const staged = await promoteAllWaiting(ctx);
  indexed += staged.indexed;
  if (staged.refused > 0) ctx.log.warn({ count: staged.refused }, 'reconcile: staged uploads refused (their names held other files)');
  if (staged.deferred > 0) ctx.log.warn({ count: staged.deferred }, 'reconcile: staged uploads left waiting (another promotion held their names; the next run promotes them)');

  let pending: FileRecord[] = [];
  let pendingSince = 0;
  const indexPending = async () => {
    const batch = pending;
    pending = [];
    indexed += await ingestRecords(ctx, batch);
  };
  // Objects without a record, oldest first, each being read and digested (recordToIngest).
  const inFlight: Promise<FileRecord | 'exists' | 'skipped'>[] = [];
  const settleOldest = async () => {
    const result = await inFlight.shift()!;
    if (result === 'skipped') skipped++;
    else if (result !== 'exists') {
      if (pending.length === 0) pendingSince = Date.now();
      pending.push(result);
    }
    if (pending.length >= INDEX_BATCH || (pending.length > 0 && Date.now() - pendingSince >= INDEX_EVERY_MS)) await indexPending();
    report();
  };
  let refusedLinks = 0;
  const firstLinks: string[] = [];
  let notRegularFiles = 0;
  const firstOthers: string[] = [];
  const onRefused = (key: string, kind: string) => {
    if (kind !== 'symbolic link') {
      notRegularFiles++;
      if (firstOthers.length < 10) firstOthers.push(`${key} (${kind})`);
      return;
    }
    refusedLinks++;
    if (firstLinks.length < 10) firstLinks.push(key);
  };
  try {
    for await (const object of ctx.store.list(onRefused)) {
      objects++;
      while (!record.done && byteOrder(record.value, object.key) < 0) await checkRecord(record.value);
      if (!record.done && record.value === object.key) {
        await nextRecord();
        report();
      } else {
        const digesting = recordToIngest(ctx, object.key);
        // Its failure is met when it is settled in turn; meanwhile it must not count as unhandled.
        digesting.catch(() => {});
        inFlight.push(digesting);
        if (inFlight.length >= DIGESTS_IN_FLIGHT) await settleOldest();
      }
    }
    while (inFlight.length > 0) await settleOldest();
  } finally {
    // A failed run returns only once nothing it started is still reading the store or the catalog.
    await Promise.allSettled(inFlight);
  }
  await indexPending();
  report();
  while (!record.done) await checkRecord(record.value);

  if (missingCount > 0) ctx.log.warn({ count: missingCount, first: firstMissing }, 'reconcile: records without objects');
  if (refusedLinks > 0) ctx.log.warn({ count: refusedLinks, first: firstLinks }, 'reconcile: symbolic links in the store, not followed (remove them; docs/trust.md)');
  if (notRegularFiles > 0) ctx.log.warn({ count: notRegularFiles, first: firstOthers }, 'reconcile: entries in the store that are no regular file, not opened (remove them; docs/trust.md)');
  return { indexed, skipped, missing, refused: staged.refused, deferred: staged.deferred, refusedLinks, ...(notRegularFiles > 0 ? { notRegularFiles } : {}) };
}
