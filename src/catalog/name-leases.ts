/**
 * Leases on file names, kept in the catalog so that every instance, Lambda and reconcile
 * sharing it sees them: whoever writes a name into the object store holds its lease, so two
 * promotions of one name never write at once (docs/deploy.md, *Files larger than one PUT*).
 * A lease expires, so a promoter that crashed does not hold its name for ever; a live one
 * renews it while it writes. Times are the database's clock, the same for every holder.
 */
export interface NameLeases {
  /**
   * Takes the lease on `filePath` for `holder`, for `ttlMs`: true when it was free, expired,
   * or already `holder`'s (then renewed). Atomic: of racing acquirers exactly one gets it.
   */
  acquire(filePath: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Extends `holder`'s lease by `ttlMs` from now: false when the lease is no longer `holder`'s (taken over, or released). */
  renew(filePath: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Whether anyone holds an unexpired lease on `filePath` now. */
  held(filePath: string): Promise<boolean>;
  /** Ends `holder`'s lease; a lease held by another is left alone. */
  release(filePath: string, holder: string): Promise<void>;
}
