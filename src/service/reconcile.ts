import { ingest } from './ingest.js';
import type { ServiceContext } from './service-context.js';

export interface ReconcileReport {
  /** Objects that had no record and were indexed. */
  readonly indexed: number;
  /** Objects whose keys break the naming rules: left alone, not indexed. */
  readonly skipped: number;
  /** Records whose object is missing from the store: reported, never deleted. */
  readonly missing: readonly string[];
}

export interface ReconcileOptions {
  /**
   * Also look up every record's object (one HEAD per record). Off at server start,
   * where it would make start-up time grow with the catalog; on for `sdc reconcile`.
   */
  readonly checkRecords?: boolean;
}

/**
 * Brings store and catalog into agreement: every object gets a record; records
 * without objects are reported. Idempotent and safe to run at any time.
 */
export async function reconcile(ctx: ServiceContext, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  let indexed = 0;
  let skipped = 0;
  for await (const object of ctx.store.list()) {
    const result = await ingest(ctx, object.key);
    if (result === 'indexed') indexed++;
    else if (result === 'skipped') skipped++;
  }
  const missing: string[] = [];
  if (options.checkRecords === false) return { indexed, skipped, missing };
  for await (const path of ctx.catalog.paths()) {
    if (!(await ctx.store.head(path))) missing.push(path);
  }
  if (missing.length > 0) ctx.log.warn({ count: missing.length, first: missing.slice(0, 10) }, 'reconcile: records without objects');
  return { indexed, skipped, missing };
}
