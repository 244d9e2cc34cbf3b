import { ingestionStamp } from '../../wire/instant.js';
import type { ObjectDigest } from '../object-store.js';
import { writeNote } from './object-note.js';
import { fsync, linkIfFree } from './write-primitives.js';

/**
 * The last steps of every write to the local store, a single PUT's and a completed upload in
 * parts' alike: the temporary file `temp` (written and hashed: `written`) is fsynced, its note
 * (uploader, ingestion date, size, SHA-256, and the id of the upload in parts it completes) written, then it is linked under `key`'s file
 * `target` if that name is free. The note first: by the time the file is under its key, who
 * sent it and when are with it, for a crash before its record or a catalog rebuilt from the
 * store (docs/deploy.md, *Indexing*). Undefined when the name was taken meanwhile: the note just
 * written is then another file's, which the store's digest ignores (its SHA-256 is not the file's).
 */
export async function storeObject(
  root: string,
  key: string,
  temp: string,
  target: string,
  written: { readonly size: number; readonly sha256: string },
  uploader: string | undefined,
  uploadId?: string,
): Promise<ObjectDigest | undefined> {
  await fsync(temp);
  const ingestionDate = ingestionStamp();
  await writeNote(root, key, { uploader, ingestion_date: ingestionDate, ...written, ...(uploadId !== undefined ? { upload_id: uploadId } : {}) });
  if (!(await linkIfFree(temp, target))) return undefined;
  return { ...written, uploader, ingestionDate };
}
