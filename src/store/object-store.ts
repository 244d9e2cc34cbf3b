import type { ReadPace } from '../wire/content-digest.js';
import { INVALID_PARTS, NO_SUCH_UPLOAD, OBJECT_TOO_LARGE, ServerError } from '../errors/index.js';

/** What the store knows of one object. */
export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly lastModified: Date;
}

/** Size and SHA-256 of an object's bytes, computed by streaming them once. */
export interface ObjectDigest {
  readonly size: number;
  readonly sha256: string;
  /** The API key name the object was uploaded with, where the store keeps it with the object (S3: `x-amz-meta-uploader`). */
  readonly uploader?: string;
  /**
   * When the bytes became the file (ISO 8601), where the store keeps it with the object (S3:
   * `x-amz-meta-ingestion-date`, set at promotion; the local store: beside the file). The record
   * takes it, so a catalog rebuilt from the store keeps every ingestion date.
   */
  readonly ingestionDate?: string;
}

/** An upload held under a staging key until it is promoted to the key it names. */
export interface StagedUpload {
  readonly stagingKey: string;
  /** The canonical stored path the bytes are for. */
  readonly key: string;
  /** When the store took the bytes, where the listing says (the background sweep leaves fresh ones to their notification). */
  readonly storedAt?: Date;
}

/**
 * What promoting a staged upload did. `promoted`: the bytes now lie under the real key,
 * which was free (`digest` describes exactly the bytes written there). `duplicate`: the
 * real key already holds these very bytes (the same upload announced twice). `refused`:
 * the real key holds other bytes, which stay; this upload lost and was removed. `absent`:
 * no such staged object (promoted and removed already). `interrupted`: the writer's hold
 * on the name (its lease) was lost before the write was completed; nothing was written
 * under the real key and the staged object stays, for a later try. `mismatch`: the bytes are
 * not those the upload address was bound to (docs/api.md, "Checked transfers").
 */
export type Promotion =
  | { readonly outcome: 'promoted'; readonly digest: ObjectDigest }
  | { readonly outcome: 'duplicate' | 'refused' | 'absent' | 'interrupted' }
  /** The staged bytes are not those its address was bound to: removed, nothing written under the real key. */
  | { readonly outcome: 'mismatch'; readonly declared: string; readonly received: string };

/**
 * The promoter's hold on a name while it writes it (the service's lease in the catalog): a
 * write that takes long asks it between steps, and always right before the step that makes
 * the object appear under the real key; false means stop and write nothing there.
 */
export interface WriteGuard {
  /**
   * True while the name is still the writer's (and keeps it so a while longer). May answer
   * from a renewal made a moment ago (the service's lease: at most a third of its time before).
   */
  stillHeld(): Promise<boolean>;
  /** Like stillHeld, always renewed now: before a step that nothing in the store guards (a copy's completion on RGW). */
  renewedNow?(): Promise<boolean>;
}

/**
 * Stores whose upload addresses name a unique staging key rather than the real one
 * (S3: a presigned PUT cannot refuse to replace an object unless the client sends
 * If-None-Match, and the mission's client does not). Ingest promotes each staged upload
 * with a write that refuses to replace, so no client can overwrite a stored file.
 */
export interface StagingArea {
  /** The upload a key names, or undefined when the key is not a staging key. */
  stagedUpload(key: string): StagedUpload | undefined;
  /** Staged uploads waiting, oldest first; only those for `key` when given. */
  listStaged(key?: string): AsyncIterable<StagedUpload>;
  /**
   * Moves the bytes to the real key unless it holds an object; removes the staging object.
   * The caller holds the name's lease; `guard` tells whether it still does.
   */
  promote(upload: StagedUpload, guard?: WriteGuard, options?: PromoteOptions): Promise<Promotion>;
  /** Whether the upload still waits under its staging key (one HEAD; promoted or settled: false). */
  isWaiting(upload: StagedUpload): Promise<boolean>;
  /** Removes a staged upload (absent already is fine): after its record is committed, when promoted with `keepStaged`. */
  discard(upload: StagedUpload): Promise<void>;
  /** Whether an object's metadata (`x-amz-meta-*`, as an event carries it) is that of a promotion's write of the real key. */
  writtenByPromotion(metadata: Readonly<Record<string, string>>): boolean;
}

export interface PromoteOptions {
  /**
   * Leave the staged object in place when the bytes are promoted (or found promoted already):
   * the caller discards it once the record is committed, so a crash in between leaves it for
   * the next sweep, which finds the name holding its bytes and indexes them.
   */
  readonly keepStaged?: boolean;
}

/**
 * The object store port. Keys are canonical stored paths (docs/api.md, File names and stored paths); the
 * service never builds one from client input without parsing the name first.
 */
export interface ObjectStore {
  /** What the store knows of a key; answered at once (no promise) by stores that can, e.g. the local one. */
  head(key: string): ObjectInfo | undefined | Promise<ObjectInfo | undefined>;
  /**
   * A signed address a client PUTs the bytes to, valid for `ttlSeconds`; `uploader`
   * (an API key's name) is bound into it so the record written at PUT time knows who asked.
   * `sha256` (lowercase hex), when given, binds the address to those bytes: the store (or the
   * promotion, on S3) refuses others (docs/api.md, "Checked transfers").
   */
  presignPut(key: string, ttlSeconds: number, uploader?: string, sha256?: string): string | Promise<string>;
  /**
   * A signed, followable address of the bytes, valid for `ttlSeconds` (at once when signed here,
   * as the local store's). `evidence`: the kept bytes of a withdrawn file, for a curator; the
   * local store serves a withdrawn file only through such an address (docs/api.md "Withdrawn
   * files"); S3 cannot tell, so its addresses are the same.
   */
  presignGet(key: string, ttlSeconds: number, options?: { readonly evidence?: boolean }): string | Promise<string>;
  /**
   * How long an address signed now really lives, where that can be less than asked: S3's die with
   * the credentials that signed them (docs/deploy.md "Credentials and address lifetimes").
   * Absent: every address lives as long as asked.
   */
  signingLifetime?(ttlSeconds: number): Promise<number>;
  /**
   * Every stored object, in key order where the backend allows. Entries the store refuses to
   * read (the local store: symbolic links, which it never follows, and anything else that is
   * not a regular file: a FIFO, a socket, a device) are left out and told to `onRefused` with
   * what they are (`symbolic link`, `FIFO`, ...), for the reconcile to report.
   */
  list(onRefused?: (key: string, kind: string) => void): AsyncIterable<ObjectInfo>;
  /**
   * Streams the object once to learn its size and SHA-256 (for indexing, and the fixity
   * audit, which reads no faster than `pace` lets it).
   */
  digest(key: string, pace?: ReadPace): Promise<ObjectDigest>;
  /** Liveness check for /readyz. */
  ping(): Promise<void>;
  /**
   * Deletes a stored object; false when there was none (idempotent). Only `sdc purge` calls it,
   * for the kept bytes of withdrawn files (docs/deploy.md "Purging withdrawn files").
   */
  purge(key: string): Promise<boolean>;
  /**
   * True when every instance uses this same store (S3): its outage is then no reason to take
   * one instance out of a balancer, and /readyz reports it as "degraded" instead of failing.
   */
  readonly shared?: boolean;
  /** Present when uploads arrive under staging keys (S3); the local store writes the real key at once. */
  readonly staging?: StagingArea;
  /** Uploads in parts, for files larger than one PUT should carry. */
  readonly multipart?: MultipartUploads;
  /**
   * Clears what an interrupted process left behind in a store the process writes itself
   * (the local store: temporary files, uploads in parts past their lifetime). Run at start.
   */
  recover?(): Promise<{ readonly temporaryFiles: number; readonly expiredUploads: number }>;
  /** Resolves once the writes this process has under way have finished or cleaned up (graceful close). */
  settled?(): Promise<void>;
  /** The free space of a store on this machine's disk (the local store), against its watermark (SDC_MIN_FREE). */
  readonly space?: StoreSpace;
}

/** A look at a store's file system, in bytes. */
export interface SpaceReading {
  /** What the service may still write. */
  readonly free: number;
  readonly size: number;
  /** The watermark: below it new uploads are refused (507). */
  readonly minFree: number;
  readonly low: boolean;
}

export interface StoreSpace {
  /** Recent, never older than a second; undefined when the file system cannot be read. */
  reading(): SpaceReading | undefined;
}

/** A part the store holds for a multipart upload. `etag` is opaque, without quotes. */
export interface UploadedPart {
  readonly partNumber: number;
  readonly etag: string;
  readonly size: number;
}

/** A part named by the client at completion: its number and the ETag its PUT answered. */
export interface CompletedPart {
  readonly partNumber: number;
  readonly etag: string;
}

/**
 * What completing a multipart upload did. `stored`: the parts' bytes now lie under the key,
 * which was free; `digest` describes exactly those bytes. `exists`: the key holds an object,
 * which stays; this upload is removed. `interrupted`: the hold on the name (`guard`) was lost
 * before the key was written; nothing was written there, and completing again continues.
 */
export type MultipartCompletion =
  | {
      readonly outcome: 'stored';
      readonly digest: ObjectDigest;
      /**
       * The joined object the bytes were promoted from, where the store keeps one: left in place
       * until the record is committed, then discarded by the caller (`staging.discard`), so a
       * crash in between leaves it for the sweep (`listAssembled`).
       */
      readonly assembled?: StagedUpload;
    }
  /**
   * `assembled`: the joined object, kept when the key holds its very bytes already (this upload's
   * earlier promotion, cut before its record); the caller discards it once the record is committed.
   */
  | { readonly outcome: 'exists'; readonly assembled?: StagedUpload }
  | { readonly outcome: 'interrupted' }
  /** The joined bytes are not those declared at `create`: nothing written under the key (docs/api.md, "Checked transfers"). */
  | { readonly outcome: 'mismatch'; readonly declared: string; readonly received: string };

/**
 * Uploads in parts (the S3 multipart model): `create` opens an upload for a key, each part
 * is PUT to its own signed address, `complete` joins the named parts, in order, into the
 * object under the key, never replacing one; `abort` drops the upload and its parts.
 */
export interface MultipartUploads {
  /** Smallest part but the last (S3: 5 MiB). */
  readonly minPartSize: number;
  /** Largest part (S3: 5 GiB). */
  readonly maxPartSize: number;
  /** Most parts in one upload (S3: 10,000). */
  readonly maxParts: number;
  /** Largest file one upload in parts may store. */
  readonly maxSize: number;
  /** `sha256`: the digest declared for the joined bytes; completion refuses others (`mismatch`). */
  create(key: string, uploader?: string, sha256?: string): Promise<string>;
  /**
   * NoSuchUploadError unless the upload is open for `key` and was opened by `uploader` (an API
   * key's name; none without keys, when the unguessable id is the opener's secret). The service
   * asks it before handing out part addresses, listing, completing or aborting.
   */
  checkOwner(key: string, uploadId: string, uploader?: string): Promise<void>;
  presignPart(key: string, uploadId: string, partNumber: number, ttlSeconds: number): Promise<string>;
  /** The parts stored so far, by number (the newest copy of a part sent twice). NoSuchUploadError if none. */
  listParts(key: string, uploadId: string): Promise<UploadedPart[]>;
  /** The caller holds the name's lease; `guard` tells whether it still does (stores whose writes can replace ask it). */
  complete(key: string, uploadId: string, parts: readonly CompletedPart[], guard?: WriteGuard): Promise<MultipartCompletion>;
  /** Drops the upload and its parts; absent already is fine. */
  abort(key: string, uploadId: string): Promise<void>;
  /**
   * The size (and SHA-256, where the store keeps it) the stored object under `key` was written
   * with, when upload `uploadId` opened by `uploader` is the completion that stored it (the local
   * store's note; S3: the upload's mark in the object's metadata). A repeated completion answers from it.
   */
  completedAs?(key: string, uploadId: string, uploader?: string): Promise<{ readonly size: number; readonly sha256?: string } | undefined>;
  /**
   * Uploads the store has joined whose completion has not recorded them yet (under way, or cut
   * by a crash between the join and the record), oldest first, as staged uploads the staging
   * area promotes: the sweep indexes those it finds older than a few seconds.
   */
  listAssembled?(): AsyncIterable<StagedUpload>;
}

/** No open upload with this id for this key (never opened, completed, aborted or expired). */
export class NoSuchUploadError extends ServerError {
  override name = 'NoSuchUploadError';
  constructor(readonly key: string) {
    super(NO_SUCH_UPLOAD.code, NO_SUCH_UPLOAD.statusCode, NO_SUCH_UPLOAD.message(key));
  }
}

/** A completion whose list of parts does not match the parts stored (400). */
export class InvalidPartsError extends ServerError {
  override name = 'InvalidPartsError';
  constructor(reason: string) {
    super(INVALID_PARTS.code, INVALID_PARTS.statusCode, INVALID_PARTS.message(reason));
  }
}

/** A PUT whose bytes pass the configured maximum object size: refused, nothing stored. */
export class ObjectTooLargeError extends ServerError {
  override name = 'ObjectTooLargeError';
  constructor(readonly limit: number) {
    super(OBJECT_TOO_LARGE.code, OBJECT_TOO_LARGE.statusCode, OBJECT_TOO_LARGE.message(limit));
  }
}
