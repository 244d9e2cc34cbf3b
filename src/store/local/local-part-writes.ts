import { readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidPartsError, NoSuchUploadError, ObjectTooLargeError, type UploadedPart } from '../object-store.js';
import { UploadUnderWayError } from './local-store-errors.js';
import { detachable, fsync, meteredDigest, tempFileIn, tempFileWriter, type Detachable } from './write-primitives.js';
import { PART_FILE, partPrefix } from './upload-folder.js';

/** An open upload's part sizes: stored (one per part number) and arriving (bytes so far). */
interface PartSizes {
  readonly stored: Map<number, number>;
  storedTotal: number;
  readonly arriving: Map<number, number>;
}

/** What part writes need of their upload (local-multipart.ts): its folder, its checks, its limits. */
export interface PartUploads {
  readonly maxPartSize: number;
  readonly maxParts: number;
  /** Largest object, all parts together (SDC_MAX_OBJECT_SIZE). */
  readonly maxSize: number;
  /** The upload's folder (throws on a malformed id). */
  dirOf(uploadId: string): string;
  /** NoSuchUploadError unless the upload is open for `key`. */
  meta(key: string, uploadId: string): Promise<unknown>;
  /** The upload's stored parts; NoSuchUploadError unless it is open for `key`. */
  listParts(key: string, uploadId: string): Promise<UploadedPart[]>;
}

/**
 * The parts of uploads on the local store as they arrive: each streamed to a `.upload-*`
 * temporary file, fsynced, then renamed to `<number>.<sha256>` (its name is its ETag), and the
 * running sizes that keep an upload's parts within SDC_MAX_OBJECT_SIZE.
 */
export class LocalPartWrites {
  /**
   * Per open upload: the size of each part stored (loaded from its folder on first use) and
   * the bytes each part being written has received so far. A part's bytes count once (a part
   * sent again replaces it), and stored plus arriving bytes never pass SDC_MAX_OBJECT_SIZE.
   */
  private readonly sizes = new Map<string, PartSizes>();
  /** Part sends under way, by `<upload id>/<part number>`: the newest of each, and how to supersede it. */
  private readonly writing = new Map<string, { readonly input: Detachable; readonly superseded: Error; readonly done: Promise<string> }>();

  constructor(private readonly uploads: PartUploads) {}

  /**
   * Stores one part from a stream; answers its ETag (the SHA-256 of its bytes). A part sent
   * again replaces the earlier copy once whole (never kept beside it). A send of a part while
   * an earlier send of it is still under way supersedes that one: the earlier input is ended
   * (its request answered 409 UploadUnderWayError), its cleanup awaited, then this one is
   * written; so a client resuming after a stalled connection never waits on it. The parts'
   * bytes together never pass SDC_MAX_OBJECT_SIZE (ObjectTooLargeError). However the source
   * ends, the temporary file goes and its handle is closed.
   */
  write(key: string, uploadId: string, partNumber: number, source: Readable): Promise<string> {
    const slot = `${uploadId}/${partNumber}`;
    const earlier = this.writing.get(slot);
    const input = detachable(source);
    const superseded = new UploadUnderWayError(`${key} (part ${partNumber})`);
    const write = async () => {
      if (earlier) {
        earlier.input.stream.destroy(earlier.superseded);
        await earlier.done.catch(() => undefined);
      }
      // A newer send may have superseded this one while it waited: writeOnce then fails at once.
      return this.writeOnce(key, uploadId, partNumber, input);
    };
    const done = write().finally(() => {
      if (this.writing.get(slot)?.done === done) this.writing.delete(slot);
    });
    this.writing.set(slot, { input, superseded, done });
    return done;
  }

  /** Forgets an upload's sizes (completed or aborted). */
  forget(uploadId: string): void {
    this.sizes.delete(uploadId);
  }

  /** The upload's part sizes, read from its folder the first time (the newest copy of each part). */
  private async sizesOf(key: string, uploadId: string): Promise<PartSizes> {
    let entry = this.sizes.get(uploadId);
    if (!entry) {
      const stored = new Map((await this.uploads.listParts(key, uploadId)).map((p) => [p.partNumber, p.size] as const));
      entry = this.sizes.get(uploadId) ?? { stored, storedTotal: [...stored.values()].reduce((a, b) => a + b, 0), arriving: new Map() };
      this.sizes.set(uploadId, entry);
    }
    return entry;
  }

  /** A meter for one part: fails once the upload's parts, this one's bytes so far included, pass the limit. */
  private meter(entry: PartSizes, partNumber: number): Transform {
    const limit = this.uploads.maxSize;
    entry.arriving.set(partNumber, 0);
    return new Transform({
      transform(chunk: Buffer, _encoding, done) {
        entry.arriving.set(partNumber, (entry.arriving.get(partNumber) ?? 0) + chunk.length);
        // Parts stored, less those being sent again (replaced), plus every part arriving.
        let total = entry.storedTotal;
        for (const [n, size] of entry.arriving) total += size - (entry.stored.get(n) ?? 0);
        done(total > limit ? new ObjectTooLargeError(limit) : null, chunk);
      },
    });
  }

  private async writeOnce(key: string, uploadId: string, partNumber: number, input: Detachable): Promise<string> {
    let temp: string | undefined;
    let entry: PartSizes | undefined;
    try {
      if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > this.uploads.maxParts) {
        throw new InvalidPartsError(`Part numbers run from 1 to ${this.uploads.maxParts}.`);
      }
      await this.uploads.meta(key, uploadId);
      if (input.stream.errored) throw input.stream.errored;
      entry = await this.sizesOf(key, uploadId);
      const dir = this.uploads.dirOf(uploadId);
      temp = tempFileIn(dir);
      const { meter, digest } = meteredDigest(this.uploads.maxPartSize);
      try {
        await pipeline(input.stream, this.meter(entry, partNumber), meter, tempFileWriter(temp));
      } catch (err) {
        // The upload was completed or aborted meanwhile: its folder is gone.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NoSuchUploadError(key);
        throw err;
      }
      await fsync(temp);
      const { sha256: etag, size } = digest();
      const prefix = partPrefix(partNumber);
      try {
        await rename(temp, join(dir, `${prefix}${etag}`));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NoSuchUploadError(key);
        throw err;
      }
      temp = undefined;
      // The copy just stored replaces any earlier one of this part: one file per part number.
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (name.startsWith(prefix) && name !== `${prefix}${etag}` && PART_FILE.test(name)) await unlink(join(dir, name)).catch(() => undefined);
      }
      entry.storedTotal += size - (entry.stored.get(partNumber) ?? 0);
      entry.stored.set(partNumber, size);
      return etag;
    } finally {
      entry?.arriving.delete(partNumber);
      input.detach();
      if (temp !== undefined) await unlink(temp).catch(() => undefined);
    }
  }
}
