import type { Readable } from 'node:stream';
import { backendFailure } from '../../errors/index.js';
import type { ObjectDigest, ObjectInfo } from '../object-store.js';
import { StoreLinkError, UploadUnderWayError } from './local-store-errors.js';
import { readNote } from './object-note.js';
import { storeObject } from './store-object.js';
import { detachable, type Detachable } from './write-primitives.js';

/** The backend's name in BACKEND_FAILED's text. */
export const LOCAL_STORE = 'Local store';

/**
 * `stored`: the bytes are now the file. `same`: the key held exactly these bytes from the same
 * uploader already (its own PUT retried after a crash or a failed answer): nothing was written,
 * the digest is the stored file's. `exists`: the key holds another file. `mismatch`: the bytes are
 * not those the address was bound to (`sha256` is theirs); nothing was stored, the key stays free.
 */
export type WriteResult =
  | ({ readonly status: 'stored' | 'same' } & ObjectDigest)
  | { readonly status: 'exists' }
  | { readonly status: 'mismatch'; readonly sha256: string };

/** What a single write needs of the store (local-object-store.ts): its root, limit and key checks. */
export interface WriteTarget {
  readonly root: string;
  readonly maxObjectSize: number;
  fileOf(key: string): string;
  linkOn(key: string): string | undefined;
  head(key: string): ObjectInfo | undefined;
}

/**
 * Single PUTs to the local store, one per key at a time. The bytes go to a temporary file in
 * the same folder, hashed on the way and fsynced; `link` then puts them in place only if the
 * key is free, atomically, so racing writers end with exactly one stored and a crash leaves no
 * partial file under the key.
 */
export class LocalObjectWrites {
  /** The write under way for each key. */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(private readonly store: WriteTarget) {}

  /**
   * Stores a stream under `key`, never replacing an object that is there. Bytes past
   * `maxObjectSize` stop the write at once (ObjectTooLargeError) and the temporary file goes.
   *
   * The source's end, error and close are watched from this call on, before anything
   * is awaited, and a source that already ended early fails at once: however the
   * request ends, the write ends too, with its temporary file removed and its handle
   * closed. One write per key at a time: a second one while the first is under way is
   * refused (UploadUnderWayError), so one address replayed many times holds one write.
   * A disk failure is BACKEND_FAILED with the disk's error as its cause (a full disk is
   * still found down the chain: 507); a client that left mid-body fails as it did.
   */
  write(key: string, source: Readable, uploader?: string, sha256?: string): Promise<WriteResult> {
    // Refused before a byte of the body is read: the answer closes the connection.
    if (this.writing.has(key)) return Promise.reject(new UploadUnderWayError(key));
    const input = detachable(source);
    const writing = this.writeOnce(key, input, uploader, sha256);
    const tracked = writing.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(key, tracked);
    void tracked.then(() => this.writing.delete(key));
    return writing;
  }

  /** Resolves once every write under way has finished or cleaned up. */
  async settled(): Promise<void> {
    await Promise.all(this.writing.values());
  }

  private async writeOnce(key: string, input: Detachable, uploader: string | undefined, sha256: string | undefined): Promise<WriteResult> {
    let file: string;
    try {
      file = this.store.fileOf(key);
    } catch (err) {
      input.detach();
      throw err;
    }
    return this.steps(key, file, input, uploader, sha256).catch((err: unknown) => {
      // The client's own failure (it left mid-body) is not the disk's; coded errors pass as they are.
      throw input.sourceFailed() ? err : backendFailure(LOCAL_STORE, `write ${key}`, err);
    });
  }

  private async steps(key: string, file: string, input: Detachable, uploader: string | undefined, declared: string | undefined): Promise<WriteResult> {
    try {
      const through = this.store.linkOn(key);
      if (through !== undefined) throw new StoreLinkError(key, through);
      // Taken: refused before a byte is read, unless it may be this uploader's own retry (its note names them).
      const retryOf = this.store.head(key) ? await readNote(this.store.root, key) : undefined;
      if (this.store.head(key) && (retryOf === undefined || retryOf.uploader !== uploader)) return { status: 'exists' };
      // A retry: answered from the bytes it sent, never stored again (the same bytes: 200; others: taken).
      const sameAsStored = (written: { size: number; sha256: string }): WriteResult | undefined =>
        retryOf === undefined
          ? undefined
          : retryOf.size === written.size && retryOf.sha256 === written.sha256
            ? { status: 'same', ...written, uploader, ingestionDate: retryOf.ingestion_date }
            : { status: 'exists' };
      const outcome = await storeObject({ root: this.store.root, key, target: file, maxSize: this.store.maxObjectSize, uploader, declared }, input.stream, sameAsStored);
      if (outcome.status === 'stored') return { status: 'stored', ...outcome.digest };
      // Not the bytes the address was bound to: nothing stored, the key stays free.
      if (outcome.status === 'mismatch') return { status: 'mismatch', sha256: outcome.received };
      return outcome.status === 'settled' ? outcome.answer : outcome;
    } finally {
      input.detach();
    }
  }
}
