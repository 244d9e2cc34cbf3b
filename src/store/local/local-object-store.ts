import { lstatSync, type Stats } from 'node:fs';
import { lstat, mkdir, opendir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { backendCall } from '../../errors/index.js';
import { digestOf, type ReadPace } from '../../wire/content-digest.js';
import { type ObjectDigest, type ObjectInfo, type ObjectStore } from '../object-store.js';
import { LocalMultipart } from './local-multipart.js';
import { StoreLinkError } from './local-store-errors.js';
import { LOCAL_STORE, LocalObjectWrites, type WriteResult } from './local-object-write.js';
import { notesRootOf, readNote, removeNote } from './object-note.js';
import { entryKind, openRegularFile, type OpenedFile } from './regular-file.js';
import { storeAddress, type UrlSigner } from './url-signer.js';
import { fsync, TEMP_PREFIX } from './write-primitives.js';
import { FreeSpace, type MinFree } from './free-space.js';

export { TEMP_PREFIX } from './write-primitives.js';
export { StoreLinkError, UploadUnderWayError } from './local-store-errors.js';
export type { WriteResult } from './local-object-write.js';
export { DEFAULT_MIN_FREE, parseMinFree, type MinFree } from './free-space.js';

/**
 * The embedded object store: files under a root folder, served by this server's own
 * signed PUT/GET routes (`/store/<key>`).
 */
export class LocalObjectStore implements ObjectStore {
  readonly multipart: LocalMultipart;
  readonly space: FreeSpace;
  /** Single PUTs, one per key at a time. */
  private readonly writes = new LocalObjectWrites(this);

  constructor(
    readonly root: string,
    private readonly signer: UrlSigner,
    /** Base of signed addresses; a function because the port is known only after listen. */
    private readonly publicUrl: () => string,
    /** Largest object `write` stores, bytes. */
    readonly maxObjectSize = Number.MAX_SAFE_INTEGER,
    /** Below this free space new uploads are refused (docs/deploy.md "Free space"). */
    minFree?: MinFree,
  ) {
    this.multipart = new LocalMultipart(this, signer, publicUrl);
    this.space = new FreeSpace(root, minFree);
  }

  /** Absolute file of a key. Refuses anything that could step outside the root. */
  fileOf(key: string): string {
    const parts = key.split('/');
    if (key === '' || parts.some((p) => p === '' || p === '.' || p === '..' || p.startsWith('.') || p.includes('\0') || p.includes('\\'))) {
      throw new Error(`not a store key: ${JSON.stringify(key)}`);
    }
    return join(this.root, ...parts);
  }

  /**
   * A metadata lookup the kernel answers from its cache: done synchronously, it costs
   * microseconds, where the promise form costs a thread-pool hop and, for the usual
   * answer on upload ("absent"), an exception (14% of an upload request's time). Answered
   * at once, without a promise. A key whose path passes a symbolic link has no object here:
   * links are never followed (docs/trust.md).
   */
  head(key: string): ObjectInfo | undefined {
    const { stat, link } = this.pathStat(key);
    return link === undefined && stat?.isFile() ? { key, size: stat.size, lastModified: stat.mtime } : undefined;
  }

  /** Deletes the key's file and its note, durably (a symbolic link on the way is never followed: nothing there). */
  async purge(key: string): Promise<boolean> {
    if (!this.head(key)) return false;
    await this.remove(key);
    return true;
  }

  /**
   * The key's file as lstat sees it, one part of the path at a time below the root, and the
   * first part that is a symbolic link, if any (a planted link must not lead a read or a
   * write outside the store); no `stat` when a part is missing.
   */
  private pathStat(key: string): { stat?: Stats; link?: string } {
    this.fileOf(key); // refuses a key that could step outside the root
    const parts = key.split('/');
    let path = this.root;
    let stat: Stats | undefined;
    for (const [i, part] of parts.entries()) {
      path = join(path, part);
      try {
        stat = lstatSync(path, { throwIfNoEntry: false });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return {};
        throw err;
      }
      if (!stat) return {};
      if (stat.isSymbolicLink()) return { link: parts.slice(0, i + 1).join('/') };
    }
    return { stat };
  }

  /** The part of `key`'s path that is a symbolic link, if any (the store refuses to go through it). */
  linkOn(key: string): string | undefined {
    return this.pathStat(key).link;
  }

  presignPut(key: string, ttlSeconds: number, uploader?: string, sha256?: string): string {
    return this.signedUrl('PUT', key, ttlSeconds, uploader, sha256);
  }

  presignGet(key: string, ttlSeconds: number, options: { readonly evidence?: boolean } = {}): string {
    return this.signedUrl(options.evidence ? 'EVIDENCE' : 'GET', key, ttlSeconds);
  }

  private signedUrl(method: 'GET' | 'PUT' | 'EVIDENCE', key: string, ttlSeconds: number, uploader?: string, sha256?: string): string {
    const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
    const signature = this.signer.sign(method, key, expires, uploader, sha256);
    // `withdrawn=include` says which method the signature is for (an evidence GET: EVIDENCE).
    const marker = method === 'EVIDENCE' ? 'include' : undefined;
    return storeAddress(this.publicUrl(), key, [['expires', expires], ['uploader', uploader], ['sha256', sha256], ['withdrawn', marker], ['signature', signature]]);
  }

  async *list(onRefused?: (key: string, kind: string) => void): AsyncIterable<ObjectInfo> {
    const walk = this.walk(this.root, '', onRefused)[Symbol.asyncIterator]();
    for (;;) {
      const next = await backendCall(LOCAL_STORE, 'list', () => walk.next());
      if (next.done) return;
      yield next.value;
    }
  }

  private async *walk(dir: string, prefix: string, onRefused?: (key: string, kind: string) => void): AsyncIterable<ObjectInfo> {
    let entries: string[];
    try {
      const handle = await opendir(dir);
      entries = [];
      for await (const e of handle) if (!e.name.startsWith('.')) entries.push(e.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of entries.sort()) {
      const file = join(dir, name);
      // lstat: a symbolic link is reported, never followed (to a file or a folder outside the store).
      const s = await lstat(file);
      const key = prefix + name;
      if (s.isDirectory()) yield* this.walk(file, `${key}/`, onRefused);
      else if (s.isFile()) yield { key, size: s.size, lastModified: s.mtime };
      // A link is never followed; a FIFO, socket or device never opened (a FIFO's open waits for a writer).
      else onRefused?.(key, entryKind(s));
    }
  }

  /** The bytes' size and SHA-256, with the uploader and ingestion date of the note beside them when it describes these bytes. */
  digest(key: string, pace?: ReadPace): Promise<ObjectDigest> {
    return backendCall(LOCAL_STORE, `read ${key}`, async () => {
      const through = this.linkOn(key);
      if (through !== undefined) throw new StoreLinkError(key, through);
      const { handle } = await this.openForRead(key);
      const [digest, note] = await Promise.all([digestOf(handle.createReadStream(), pace), readNote(this.root, key)]);
      if (!note || note.size !== digest.size || note.sha256 !== digest.sha256) return digest;
      return { ...digest, uploader: note.uploader, ingestionDate: note.ingestion_date };
    });
  }

  /**
   * The key's file opened for reading, if it is a regular file (regular-file.ts: a FIFO, socket,
   * device or folder is refused with SDC_NOT_A_REGULAR_FILE without blocking; a symbolic link
   * made after the caller's check is refused by the open itself, O_NOFOLLOW).
   */
  openForRead(key: string): Promise<OpenedFile> {
    return openRegularFile(this.fileOf(key), key);
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  /**
   * Stores a stream under `key`, never replacing an object that is there: local-object-write.ts.
   * `sha256`: the digest declared for the bytes; other bytes are refused (`mismatch`), nothing stored.
   */
  write(key: string, source: Readable, uploader?: string, sha256?: string): Promise<WriteResult> {
    return this.writes.write(key, source, uploader, sha256);
  }

  /** Resolves once every write under way has finished or cleaned up (for a graceful close). */
  async settled(): Promise<void> {
    await Promise.all([this.writes.settled(), this.multipart.settled()]);
  }

  /**
   * Removes a stored object (one whose record could not be written); durable once
   * this resolves. Absent already is fine.
   */
  remove(key: string): Promise<void> {
    const file = this.fileOf(key);
    return backendCall(LOCAL_STORE, `remove ${key}`, async () => {
      await rm(file, { force: true });
      await removeNote(this.root, key);
      await fsync(dirname(file));
    });
  }

  /** Removes temporary files left by a crash. Run at start, before serving. */
  async removeTempFiles(dir = this.root): Promise<number> {
    let removed = 0;
    let handle;
    try {
      handle = await opendir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    for await (const e of handle) {
      const path = join(dir, e.name);
      if (e.isDirectory()) removed += await this.removeTempFiles(path);
      else if (e.name.startsWith(TEMP_PREFIX)) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }

  async recover(): Promise<{ temporaryFiles: number; expiredUploads: number }> {
    const temporaryFiles = (await this.removeTempFiles()) + (await this.removeTempFiles(notesRootOf(this.root)));
    return { temporaryFiles, expiredUploads: await this.multipart.removeExpired() };
  }
}
