import type { FileRecord, FixityOutcome } from '../catalog/index.js';
import { NOT_A_REGULAR_FILE, ServerError } from '../errors/index.js';
import type { ServiceContext } from './service-context.js';

/** A file the audit found damaged: its path, what was found, and in what (docs/deploy.md "Fixity audits"). */
export interface AuditFailure {
  readonly path: string;
  readonly fixity: Exclude<FixityOutcome, 'ok'>;
  /** E.g. `size 12 (record 10), sha256 ab.. (record cd..)`, or `no object in the store`. */
  readonly detail: string;
}

export interface AuditOptions {
  /** Only files whose stored path starts with this. */
  readonly prefix?: string;
  /** Stop after this long (ms): a file not finished by then is left for the next run, unrecorded. */
  readonly maxDurationMs?: number;
  /** Read no more than this many bytes a second, on average over the run. */
  readonly bytesPerSecond?: number;
  /** Hears of each failure as it is found (printed at once; nothing kept for a huge run). */
  readonly onFailure?: (failure: AuditFailure) => void;
  /** Hears of each file checked. */
  readonly onChecked?: (progress: AuditReport) => void;
  /** The clock (tests). */
  readonly now?: () => number;
}

export interface AuditReport {
  readonly checked: number;
  readonly ok: number;
  readonly mismatched: number;
  readonly missing: number;
  /** Bytes read and hashed, those of files left unfinished at the time limit included. */
  readonly bytes: number;
  readonly elapsedMs: number;
  /** True when the time limit ended the run before the queue did: the next run goes on from there. */
  readonly stoppedAtLimit: boolean;
}

/** The time limit came while a file was being read: the file is left as it was, for the next run. */
class TimeUp extends Error {
  override name = 'TimeUp';
}

/**
 * `sdc audit` (and the audit Lambda): re-reads stored objects, a file an earlier run was
 * reading when it died or stopped first, then those never verified, then the oldest verified
 * (Catalog.auditQueue), compares size and SHA-256 with the record and records
 * `verified_date` and `fixity` in it. One file at a time, streamed (a stream's buffer in
 * memory), paced to `bytesPerSecond`. A run resumes where the last stopped because the queue's
 * order is the verification date itself. A file whose object is absent (a HEAD says so after
 * the read failed) is `missing`; any other failure of the store (down, refusing) ends the run
 * with that error, nothing recorded for the file, so an outage never flags files.
 */
export async function audit(ctx: ServiceContext, options: AuditOptions = {}): Promise<AuditReport> {
  const now = options.now ?? Date.now;
  const started = now();
  const deadline = options.maxDurationMs === undefined ? Infinity : started + options.maxDurationMs;
  let checked = 0;
  let ok = 0;
  let mismatched = 0;
  let missing = 0;
  let bytes = 0;
  let stoppedAtLimit = false;
  // Set when the pace stopped a read: the store wraps what its stream threw in its own error.
  let timeUp = false;
  const report = (): AuditReport => ({ checked, ok, mismatched, missing, bytes, elapsedMs: now() - started, stoppedAtLimit });

  // The pace: after `bytes` read, the run must be at least bytes / rate seconds old.
  const pace = async (read: number) => {
    bytes += read;
    const rate = options.bytesPerSecond;
    const due = rate === undefined || rate <= 0 ? 0 : started + (bytes / rate) * 1000 - now();
    if (now() + Math.max(0, due) > deadline) {
      timeUp = true;
      throw new TimeUp();
    }
    if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
  };

  const check = async (record: FileRecord): Promise<void> => {
    // Noted first: should this run die or stop before the record below, the next one starts with this file.
    await ctx.catalog.auditReading(record.file_path, new Date(now()).toISOString());
    const found = await readBack(ctx, record, pace, () => timeUp);
    await ctx.catalog.recordFixity(record.file_path, new Date(now()).toISOString(), found.fixity);
    checked++;
    if (found.fixity === 'ok') ok++;
    else {
      if (found.fixity === 'mismatch') mismatched++;
      else missing++;
      ctx.log.warn({ file_path: record.file_path, fixity: found.fixity, detail: found.detail }, 'audit: stored bytes are not the file');
      options.onFailure?.({ path: record.file_path, fixity: found.fixity, detail: found.detail });
    }
    options.onChecked?.(report());
  };

  const queue = ctx.catalog.auditQueue({ prefix: options.prefix, verifiedBefore: new Date(started).toISOString() });
  try {
    for await (const page of queue) {
      for (const record of page) {
        if (now() >= deadline) throw new TimeUp();
        await check(record);
      }
    }
  } catch (err) {
    if (!(err instanceof TimeUp)) throw err;
    stoppedAtLimit = true;
  }
  const done = report();
  ctx.log.info({ ...done }, 'audit: run ended');
  return done;
}

/** Reads the object back: ok, mismatch (with what differs) or missing. */
async function readBack(
  ctx: ServiceContext,
  record: FileRecord,
  pace: (bytes: number) => Promise<void>,
  timeUp: () => boolean,
): Promise<{ fixity: FixityOutcome; detail: string }> {
  let digest;
  try {
    digest = await ctx.store.digest(record.file_path, pace);
  } catch (err) {
    if (timeUp()) throw new TimeUp();
    // A FIFO, socket or device under the name (never opened: docs/trust.md): its bytes are not there.
    if (err instanceof ServerError && err.code === NOT_A_REGULAR_FILE.code) return { fixity: 'missing', detail: err.message };
    // Missing only when the store says so; a store that fails again throws (the run ends).
    if ((await ctx.store.head(record.file_path)) === undefined) return { fixity: 'missing', detail: 'no object in the store' };
    throw err;
  }
  const differs: string[] = [];
  if (digest.size !== record.size) differs.push(`size ${digest.size} (record ${record.size})`);
  if (digest.sha256 !== record.sha256) differs.push(`sha256 ${digest.sha256} (record ${record.sha256})`);
  return differs.length === 0 ? { fixity: 'ok', detail: '' } : { fixity: 'mismatch', detail: differs.join(', ') };
}
