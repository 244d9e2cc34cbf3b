import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, opendir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  InvalidPartsError,
  NoSuchUploadError,
  type CompletedPart,
  type MultipartCompletion,
  type MultipartUploads,
  type UploadedPart,
} from '../object-store.js';
import type { ObjectStore } from '../object-store.js';
import { StoreLinkError } from './local-store-errors.js';
import { LocalPartWrites } from './local-part-writes.js';
import { readNote } from './object-note.js';
import { storeObject } from './store-object.js';
import { storeAddress, type UrlSigner } from './url-signer.js';
import { MULTIPART_DIR, newestParts, partPrefix, readUploadMeta, UPLOAD_ID, writeUploadMeta, type UploadMeta } from './upload-folder.js';
import { isSha256Hex } from '../../wire/content-digest.js';

export { MULTIPART_DIR } from './upload-folder.js';

/**
 * Open uploads older than this take no more parts and are dropped (at start-up and now and
 * then on create): a leaked part address is worth a day at most (docs/trust.md "Uploads in parts").
 */
export const DEFAULT_UPLOAD_LIFETIME_MS = 24 * 3600 * 1000;
const SWEEP_EVERY_MS = 3600 * 1000;

/** What an upload in parts needs of the local store it completes into (local-object-store.ts). */
export interface LocalFiles extends Pick<ObjectStore, 'head'> {
  readonly root: string;
  readonly maxObjectSize: number;
  fileOf(key: string): string;
  linkOn(key: string): string | undefined;
}

/**
 * Multipart uploads on the local store, the same interface as S3's. Each upload is a
 * folder `<root>/.multipart/<id>/` holding `upload.json` (its key and uploader) and its
 * parts, each named `<number>.<sha256>`: a part is streamed to a `.upload-*` temporary file
 * (removed at start-up if a crash leaves it), fsynced, then renamed into place, so a part
 * file is always whole and its name is its ETag. Completion joins the named parts into a
 * temporary file beside the key, hashing on the way, fsyncs it and links it to the key,
 * which never replaces a file: of racing completions of one name, exactly one stores.
 */
export class LocalMultipart implements MultipartUploads {
  readonly minPartSize = 5 * 1024 * 1024;
  readonly maxPartSize: number;
  readonly maxParts = 10_000;
  get maxSize(): number {
    return this.store.maxObjectSize;
  }
  /** Completions under way, by upload id: one at a time per upload. */
  private readonly completing = new Map<string, Promise<unknown>>();
  /** Part writes and completions under way (for a graceful close). */
  private readonly busy = new Set<Promise<unknown>>();
  /** Parts as they arrive, and the upload's running size. */
  private readonly parts = new LocalPartWrites(this);
  private lastSweep = 0;

  constructor(
    private readonly store: LocalFiles,
    private readonly signer: UrlSigner,
    private readonly publicUrl: () => string,
    readonly lifetimeMs = DEFAULT_UPLOAD_LIFETIME_MS,
  ) {
    this.maxPartSize = Math.min(5 * 1024 ** 3, store.maxObjectSize);
  }

  private get base(): string {
    return join(this.store.root, MULTIPART_DIR);
  }

  dirOf(uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new Error(`not an upload id: ${JSON.stringify(uploadId)}`);
    return join(this.base, uploadId);
  }

  async create(key: string, uploader?: string, sha256?: string): Promise<string> {
    this.store.fileOf(key);
    if (Date.now() - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = Date.now();
      await this.removeExpired();
    }
    const uploadId = randomBytes(16).toString('hex');
    const dir = this.dirOf(uploadId);
    await mkdir(dir, { recursive: true });
    await writeUploadMeta(dir, { key, uploader, created: Date.now(), ...(sha256 === undefined ? {} : { sha256 }) });
    return uploadId;
  }

  /** The upload's record, if it is open and is for `key`; else NoSuchUploadError. */
  async meta(key: string, uploadId: string): Promise<UploadMeta> {
    if (!UPLOAD_ID.test(uploadId)) throw new NoSuchUploadError(key);
    const meta = await readUploadMeta(this.dirOf(uploadId));
    // Past its lifetime an upload is gone, swept or not yet: no part, listing or completion.
    if (!meta || meta.key !== key || Date.now() - meta.created > this.lifetimeMs) throw new NoSuchUploadError(key);
    return meta;
  }

  /**
   * NoSuchUploadError unless the upload is open for `key` and was opened by `uploader` (the
   * API key's name; none without keys, when the unguessable id is the opener's secret).
   */
  async checkOwner(key: string, uploadId: string, uploader?: string): Promise<void> {
    const meta = await this.meta(key, uploadId);
    if ((meta.uploader ?? '') !== (uploader ?? '')) throw new NoSuchUploadError(key);
  }

  presignPart(key: string, uploadId: string, partNumber: number, ttlSeconds: number): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
    const signature = this.signer.sign('PART', partSubject(key, uploadId, partNumber), expires);
    const params = [['uploadId', uploadId], ['partNumber', partNumber], ['expires', expires], ['signature', signature]] as const;
    return Promise.resolve(storeAddress(this.publicUrl(), key, params));
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    await this.meta(key, uploadId);
    return newestParts(this.dirOf(uploadId));
  }

  /**
   * Stores one part from a stream; answers its ETag (the SHA-256 of its bytes): local-part-writes.ts.
   */
  writePart(key: string, uploadId: string, partNumber: number, source: Readable): Promise<string> {
    return this.track(this.parts.write(key, uploadId, partNumber, source));
  }

  complete(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<MultipartCompletion> {
    // One completion of an upload at a time; a second waits, then finds it gone.
    const before = this.completing.get(uploadId) ?? Promise.resolve();
    const run = before.then(() => this.completeOnce(key, uploadId, parts));
    const tracked = run.then(
      () => undefined,
      () => undefined,
    );
    this.completing.set(uploadId, tracked);
    void tracked.then(() => {
      if (this.completing.get(uploadId) === tracked) this.completing.delete(uploadId);
    });
    return this.track(run);
  }

  private async completeOnce(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<MultipartCompletion> {
    const meta = await this.meta(key, uploadId);
    if (parts.length === 0) throw new InvalidPartsError('Name at least one part to complete an upload.');
    const dir = this.dirOf(uploadId);
    const files: string[] = [];
    let previous = 0;
    for (const part of parts) {
      const etag = part.etag.replace(/^"|"$/g, '');
      if (!Number.isInteger(part.partNumber) || part.partNumber <= previous) {
        throw new InvalidPartsError('List the parts in ascending order of part number, each once.');
      }
      previous = part.partNumber;
      const file = join(dir, `${partPrefix(part.partNumber)}${etag}`);
      if (!isSha256Hex(etag) || !(await stat(file).catch(() => undefined))) {
        throw new InvalidPartsError(`Part ${part.partNumber} with ETag ${part.etag} is not stored: send it again.`);
      }
      files.push(file);
    }
    if (await this.store.head(key)) {
      await this.abort(key, uploadId);
      return { outcome: 'exists' };
    }
    const through = this.store.linkOn(key);
    if (through !== undefined) throw new StoreLinkError(key, through);
    const joined = async function* () {
      for (const file of files) yield* createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>;
    };
    const outcome = await storeObject(
      { root: this.store.root, key, target: this.store.fileOf(key), maxSize: this.store.maxObjectSize, uploader: meta.uploader, declared: meta.sha256, uploadId },
      joined(),
    );
    // Not the declared bytes: nothing under the key; the parts stay, for a corrected completion.
    if (outcome.status === 'mismatch') return { outcome: 'mismatch', declared: outcome.declared, received: outcome.received };
    await this.abort(key, uploadId);
    return outcome.status === 'stored' ? { outcome: 'stored', digest: outcome.digest } : { outcome: 'exists' };
  }

  /**
   * The digest of the file under `key` when upload `uploadId`, opened by `uploader`, is what
   * stored it (its note says so: store-object.ts); the caller checks it against the file's record,
   * since a completion that lost the name wrote its note over the winner's.
   */
  async completedAs(key: string, uploadId: string, uploader?: string): Promise<{ readonly size: number; readonly sha256: string } | undefined> {
    const note = await readNote(this.store.root, key);
    if (note?.upload_id !== uploadId || (note.uploader ?? '') !== (uploader ?? '')) return undefined;
    return { size: note.size, sha256: note.sha256 };
  }

  async abort(key: string, uploadId: string): Promise<void> {
    try {
      await this.meta(key, uploadId);
    } catch (err) {
      if (err instanceof NoSuchUploadError) return;
      throw err;
    }
    await rm(this.dirOf(uploadId), { recursive: true, force: true, maxRetries: 3 });
    this.parts.forget(uploadId);
  }

  /** Drops open uploads created more than the lifetime ago (or whose record is unreadable). */
  async removeExpired(now = Date.now()): Promise<number> {
    let removed = 0;
    let handle;
    try {
      handle = await opendir(this.base);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    for await (const e of handle) {
      if (!e.isDirectory() || !UPLOAD_ID.test(e.name)) continue;
      const dir = join(this.base, e.name);
      // No readable record: a create cut short, or one under way right now; judge by the folder's age.
      const created = (await readUploadMeta(dir).catch(() => undefined))?.created ?? (await stat(dir).catch(() => undefined))?.mtimeMs ?? 0;
      if (now - created > this.lifetimeMs) {
        await rm(dir, { recursive: true, force: true, maxRetries: 3 });
        removed++;
      }
    }
    return removed;
  }

  /** Resolves once part writes and completions under way have ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.busy].map((p) => p.catch(() => undefined)));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.busy.add(work);
    void work.then(
      () => this.busy.delete(work),
      () => this.busy.delete(work),
    );
    return work;
  }
}

/** What a part address's signature covers: key, upload and part number (key names hold no newline). */
export function partSubject(key: string, uploadId: string, partNumber: number): string {
  return `${key}\n${uploadId}\n${partNumber}`;
}
