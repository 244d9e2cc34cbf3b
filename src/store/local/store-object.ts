import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { ingestionStamp } from '../../wire/instant.js';
import type { ObjectDigest } from '../object-store.js';
import { writeNote } from './object-note.js';
import { fsync, linkIfFree, tempFileIn, writeHashed } from './write-primitives.js';

/** What a write to the local store puts under one key. */
export interface ObjectToStore {
  /** The store's root (the note goes under it: object-note.ts). */
  readonly root: string;
  readonly key: string;
  /** The key's file. */
  readonly target: string;
  /** Bytes past this stop the write at once (ObjectTooLargeError). */
  readonly maxSize: number;
  readonly uploader?: string;
  /** The SHA-256 the bytes were declared with (docs/api.md, "Checked transfers"): other bytes are not stored. */
  readonly declared?: string;
  /** The upload in parts this write completes, kept in the note (a completion sent again: LocalMultipart.completedAs). */
  readonly uploadId?: string;
}

/** `stored`: the bytes are the file now. `exists`: the key was taken meanwhile. `mismatch`: not the declared bytes; nothing stored. */
export type StoreOutcome =
  | { readonly status: 'stored'; readonly digest: ObjectDigest }
  | { readonly status: 'exists' }
  | { readonly status: 'mismatch'; readonly declared: string; readonly received: string };

/**
 * Every write to the local store, a single PUT's and a completed upload in parts' alike, in
 * its four steps: the bytes are written to a temporary file beside the key's (hashed on the
 * way), fsynced, their note written (uploader, ingestion date, size, SHA-256, and the id of the
 * upload in parts it completes), then the file is linked under the key if that name is free
 * (`link` never replaces). The note first: by the time the file is under its key, who sent it
 * and when are with it, for a crash before its record or a catalog rebuilt from the store
 * (docs/deploy.md, *Indexing*). When the name was taken meanwhile the note just written is
 * another file's, which the store's digest ignores (its SHA-256 is not the file's).
 *
 * `settle`, asked once the bytes are written and hashed, may end the write there (`settled`) with
 * its own answer (a single PUT retried with bytes already stored). The temporary file never outlives the call.
 */
export async function storeObject<T = never>(
  object: ObjectToStore,
  source: Readable | AsyncIterable<Buffer>,
  settle?: (written: { readonly size: number; readonly sha256: string }) => T | undefined,
): Promise<StoreOutcome | { readonly status: 'settled'; readonly answer: T }> {
  const dir = dirname(object.target);
  await mkdir(dir, { recursive: true });
  // The source failed while we looked (a client that left): then no temporary file is made at all.
  if ('errored' in source && source.errored) throw source.errored;
  const temp = tempFileIn(dir);
  try {
    const written = await writeHashed(source, temp, object.maxSize);
    if (object.declared !== undefined && written.sha256 !== object.declared) return { status: 'mismatch', declared: object.declared, received: written.sha256 };
    const answer = settle?.(written);
    if (answer !== undefined) return { status: 'settled', answer };
    await fsync(temp);
    const ingestionDate = ingestionStamp();
    await writeNote(object.root, object.key, { uploader: object.uploader, ingestion_date: ingestionDate, ...written, ...(object.uploadId !== undefined ? { upload_id: object.uploadId } : {}) });
    if (!(await linkIfFree(temp, object.target))) return { status: 'exists' };
    return { status: 'stored', digest: { ...written, uploader: object.uploader, ingestionDate } };
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
