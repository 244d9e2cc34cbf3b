import type { AuditQueueOptions, FixityOutcome, FixityStatus } from './audit-queue.js';
import type { ChangeEntry, ChangesRange } from './change-log.js';
import type { ChangeJsonPage } from './change-pages.js';
import type { CoverageDay } from './coverage-day.js';
import type { FileRecord } from './file-record.js';
import type { KeyStore } from './key-store.js';
import type { NameLeases } from './name-leases.js';
import type { QueryFilter } from './query-filter.js';
import type { QueryOptions } from './query-options.js';
import type { Audience } from './visibility-sql.js';
import type { RecordField, Tombstone } from '../wire/record.js';
import type { ManifestEntry } from '../wire/release.js';
import type { AccessPolicy } from '../mission/index.js';
import type { ReleaseDraft, Retraction, RetractOutcome, StoredRelease } from './release-manifests.js';
import type { CreatedRelease } from './release-repeats.js';
import type { Unreleasable } from './release-writes.js';

export type { ManifestSource, ReleaseDraft, Retraction, RetractOutcome, StoredRelease } from './release-manifests.js';
export type { CreatedRelease } from './release-repeats.js';
export type { Unreleasable } from './release-writes.js';

/** What a withdrawal writes into a record: derived from the record's declaration (src/wire/record.ts). */
export type { Tombstone };

/** How a withdrawal ended: done (the record as it now is), or why not (nothing was changed). */
export type WithdrawOutcome =
  | { readonly outcome: 'withdrawn'; readonly record: FileRecord }
  | { readonly outcome: 'not_found' }
  | { readonly outcome: 'already_withdrawn'; readonly record: FileRecord }
  /** superseded_by names no record, a withdrawn one, or the file itself. */
  | { readonly outcome: 'replacement_not_archived' };

/**
 * The catalog port: where file records live. Adapters (sqlite, postgres) implement it;
 * the service only ever sees this interface.
 */
export interface Catalog {
  /**
   * Inserts a record unless one with the same file_path exists. Idempotent. When one
   * exists for the same bytes without an uploader and `record` has one, the uploader is
   * filled in (an upload whose file was indexed first by a reader keeps its attribution).
   */
  insert(record: FileRecord): Promise<'inserted' | 'exists'>;
  /** Inserts many records in as few transactions as the backend allows; returns how many were new. */
  insertMany(records: readonly FileRecord[]): Promise<number>;
  /**
   * Loads a stream of records (a seed, a catalog rebuilt from its store): the same answer as
   * insertMany over all of them (a path already stored, or given twice, is left as first
   * written; the count of new ones returned), in one session, so that a load larger than the
   * table builds the secondary indexes and the planner statistics once, at its end. A load
   * that fails or is interrupted keeps every index: the records committed before its
   * indexes were set aside stay, the rest are rolled back.
   */
  bulkLoad(records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number>;
  /** The record of a path; answered at once (no promise) by backends that can, e.g. SQLite. */
  get(filePath: string): FileRecord | undefined | Promise<FileRecord | undefined>;
  /**
   * Only `fields` of a path's record (absent ones left out, as in get), for a check that needs
   * no more (an upload's name check, a download's standing); at once where `get` is. `fields`
   * should be a constant: its statement is made once per list.
   */
  getFields<F extends RecordField>(filePath: string, fields: readonly F[]): Pick<FileRecord, F> | undefined | Promise<Pick<FileRecord, F> | undefined>;
  /**
   * Whether a record has this path, without reading the record (the path's own index
   * answers): all that an upload's or a download's check needs. At once where `get` is.
   */
  has(filePath: string): boolean | Promise<boolean>;
  /**
   * Matching records in the requested order (default file_path), starting after
   * `options.after`, at most `options.limit`; fetched a page at a time (flat memory).
   */
  query(filter: QueryFilter, options?: QueryOptions): AsyncIterable<FileRecord>;
  /** How many records match. */
  count(filter: QueryFilter): Promise<number>;
  /**
   * Matching files grouped by instrument, data level and start date, in that order,
   * fetched a page at a time: what GET /coverage merges into spans.
   */
  coverage(filter: QueryFilter): AsyncIterable<CoverageDay>;
  /**
   * The change log's entries with an id above `after`, oldest first, at most `limit`: every
   * ingest and withdrawal, ids in commit order (change-log.ts; docs/api.md "The change log").
   * `range`: only those of files matching a filter, only up to an id (the live feed's reads).
   */
  changes(after: number, limit: number, range?: ChangesRange): Promise<ChangeEntry[]>;
  /**
   * A page of GET /changes: at most `limit` entries after `after` (of `audience`'s), their JSON
   * texts as the answer sends them, written by the database a piece at a time (change-pages.ts),
   * and the page's last id when it is full.
   */
  changesJson(after: number, limit: number, audience?: Audience): Promise<ChangeJsonPage>;
  /** The log's largest id; 0 while it is empty. */
  lastChangeId(): Promise<number>;
  /**
   * Withdraws an archived file: its record gains the tombstone and status 'withdrawn', and its
   * product's latest flag and coverage row are recomputed, in one transaction. Refuses (and
   * changes nothing) when the file is already withdrawn, even by a concurrent call.
   */
  withdraw(filePath: string, tombstone: Tombstone): Promise<WithdrawOutcome>;
  /**
   * Makes files public from `releaseDate` (docs/api.md "Releases"): each that was not public
   * earlier gets that date (and `release`, the number of the release); the 'released' change of
   * each whose date has come is logged in the same transaction. Answers how many changed.
   */
  publish(paths: readonly string[], releaseDate: string, release?: number): Promise<number>;
  /** Logs the 'released' change of team files whose date has passed (a scheduled release, an embargo's end): the background step. */
  announceDue(): Promise<number>;
  /**
   * Makes a numbered release (docs/api.md "Releases"; release-manifests.ts): the next number, its
   * manifest (archived files of the source, less the excluded), its files public from its date,
   * and the 'released' entries now due, in one transaction. Undefined (nothing written) when the
   * manifest would be empty; the earlier release, marked `repeat` (nothing written), when the
   * draft repeats one (release-repeats.ts).
   */
  createRelease(draft: ReleaseDraft): Promise<CreatedRelease | undefined>;
  /**
   * Of the paths a release names, those it may not hold, in the order named: unknown (no record)
   * or withdrawn. Read a page of paths per statement (release-writes.ts), never one by one.
   */
  unreleasable(paths: readonly string[]): Promise<Unreleasable[]>;
  /** Every release, by number. */
  releases(): Promise<StoredRelease[]>;
  release(number: number): Promise<StoredRelease | undefined>;
  /** A page of a release's manifest in file_path order, after `after`. */
  releaseManifest(number: number, after: string | undefined, limit: number): Promise<ManifestEntry[]>;
  /**
   * Retracts a release once (release-retraction.ts): its files return to another release's date,
   * or the date `policy` gives them, or the team; their 'retracted' entries in the same transaction.
   */
  retractRelease(number: number, retraction: Retraction, policy: AccessPolicy): Promise<RetractOutcome>;
  /** Every file_path, in order, a page at a time: for reconcile. */
  paths(): AsyncIterable<string>;
  /**
   * The fixity audit's queue (docs/deploy.md "Fixity audits"): files whose reading an earlier
   * run began and never recorded, then files never verified, in
   * file_path order, then the oldest verified first, a page at a time; only those under
   * `options.prefix`, and verified before `options.verifiedBefore` (a run's own start).
   */
  auditQueue(options: AuditQueueOptions): AsyncIterable<readonly FileRecord[]>;
  /**
   * Notes that an audit begins reading a file's bytes; recordFixity removes the note. A note
   * left behind (the run died, or stopped in the middle of the file) puts the file first in
   * the next run's queue.
   */
  auditReading(filePath: string, started: string): Promise<void>;
  /** Records what an audit found of a file's bytes, and when (and removes its auditReading note); false when the path has no record. */
  recordFixity(filePath: string, verifiedDate: string, fixity: FixityOutcome): Promise<boolean>;
  /** Fixity failures by outcome, the oldest verification, whether any file was never verified: cheap (the indexes answer). */
  fixityStatus(): Promise<FixityStatus>;
  /** Files verified at least once: a count over an index, as costly as `count({})`. */
  countVerified(): Promise<number>;
  /** The API keys, kept beside the records. */
  keys(): KeyStore;
  /** Leases on names being written into the object store, kept beside the records. */
  leases(): NameLeases;
  /** Cheap liveness check for /readyz. */
  ping(): Promise<void>;
  /** How busy the connection pools are, where the catalog has them (PostgreSQL): /metrics. */
  connectionPools?(): readonly ConnectionPoolUse[];
  close(): Promise<void>;
}

/** One connection pool's use, now. */
export interface ConnectionPoolUse {
  /** `writes` or `reads` (PostgreSQL: docs/deploy.md "PostgreSQL catalog"). */
  readonly pool: string;
  readonly max: number;
  /** Connections open, busy or idle. */
  readonly open: number;
  readonly idle: number;
  /** Queries waiting for a connection: the pool is saturated. */
  readonly waiting: number;
}
