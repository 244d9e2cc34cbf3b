import type { ServiceContext } from './service-context.js';

export interface PurgeReport {
  /** Withdrawn before the date, their bytes deleted by this run (or, with dryRun, to be deleted). */
  readonly purged: number;
  /** Withdrawn before the date, their bytes already gone (an earlier purge): nothing to do. */
  readonly alreadyGone: number;
  /** Withdrawn on or after the date: their bytes stay. */
  readonly kept: number;
}

export interface PurgeOptions {
  /** Says what would be deleted, deletes nothing. */
  readonly dryRun?: boolean;
  /** Hears of each file whose bytes were (or, with dryRun, would be) deleted. */
  readonly onPurged?: (path: string, withdrawnDate: string) => void;
}

/**
 * `sdc purge` (docs/deploy.md "Purging withdrawn files"): deletes from the store the kept bytes
 * of the files withdrawn before `before` (an ISO-8601 UTC instant). Records are never touched:
 * the tombstone stays forever, the name stays taken. Idempotent: a second run finds the bytes
 * gone. Reads the withdrawn files only (the catalog's files_withdrawn index), a page at a time.
 */
export async function purgeWithdrawn(ctx: ServiceContext, before: string, options: PurgeOptions = {}): Promise<PurgeReport> {
  let purged = 0;
  let alreadyGone = 0;
  let kept = 0;
  for await (const record of ctx.catalog.query({ status: 'withdrawn' })) {
    const date = record.withdrawn_date ?? '';
    if (!(date < before)) {
      kept++;
      continue;
    }
    const there = options.dryRun ? (await ctx.store.head(record.file_path)) !== undefined : await ctx.store.purge(record.file_path);
    if (!there) {
      alreadyGone++;
      continue;
    }
    purged++;
    if (!options.dryRun) ctx.log.info({ file_path: record.file_path, withdrawn_date: date }, 'purge: bytes of a withdrawn file deleted');
    options.onPurged?.(record.file_path, date);
  }
  return { purged, alreadyGone, kept };
}
