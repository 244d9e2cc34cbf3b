import { mkdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseDateTime } from '../../wire/instant.js';
import { fsync, tempFileIn } from './write-primitives.js';

/**
 * What the local store keeps of each file it writes, besides its bytes: who uploaded it (the
 * name the signed address carried), when the bytes became the file, and their size and SHA-256.
 * Written before the file appears under its key, so a crash between storing and indexing, or a
 * catalog rebuilt from the store (`sdc reconcile`), brings back the uploader and the ingestion
 * date exactly (docs/deploy.md, *Indexing*). A note whose size or SHA-256 is not the file's is
 * ignored.
 */
export interface ObjectNote {
  readonly uploader?: string;
  readonly ingestion_date: string;
  readonly size: number;
  readonly sha256: string;
  /** The upload in parts whose completion stored the file: a repeated completion answers what it did (docs/api.md). */
  readonly upload_id?: string;
}

/**
 * Notes live in a tree beside the store's (`<store>.notes/<key>`, JSON under the file's own
 * name), not among the files: the store folder holds exactly the stored files (what listings,
 * backups by folder and the store's GET route see); back up both folders together. The note
 * has the file's name and nothing added, so a name the store can hold (up to the file system's
 * 255 bytes) its note can too.
 */
export function notesRootOf(root: string): string {
  return `${root}.notes`;
}

function noteFileOf(root: string, key: string): string {
  return join(notesRootOf(root), ...key.split('/'));
}

/** Where earlier versions kept a note (`<key>.json`): still read, and removed with the file. */
function earlierNoteFileOf(root: string, key: string): string {
  return `${noteFileOf(root, key)}.json`;
}

/** Writes the note of `key` durably (temporary file, fsync, rename), replacing any earlier one. */
export async function writeNote(root: string, key: string, note: ObjectNote): Promise<void> {
  const file = noteFileOf(root, key);
  await mkdir(dirname(file), { recursive: true });
  const temp = tempFileIn(dirname(file));
  try {
    await writeFile(temp, `${JSON.stringify(note)}\n`, { flag: 'wx', mode: 0o644 });
    await fsync(temp);
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

/** The note of `key`, when there is a readable one. */
export async function readNote(root: string, key: string): Promise<ObjectNote | undefined> {
  let text: string;
  try {
    text = await readFile(noteFileOf(root, key), 'utf8').catch(() => readFile(earlierNoteFileOf(root, key), 'utf8'));
  } catch {
    return undefined;
  }
  try {
    const note = JSON.parse(text) as Partial<ObjectNote>;
    if (typeof note.ingestion_date !== 'string' || parseDateTime(note.ingestion_date) === undefined) return undefined;
    if (typeof note.size !== 'number' || typeof note.sha256 !== 'string') return undefined;
    if (note.uploader !== undefined && typeof note.uploader !== 'string') return undefined;
    if (note.upload_id !== undefined && typeof note.upload_id !== 'string') return undefined;
    return note as ObjectNote;
  } catch {
    return undefined;
  }
}

/** Removes the note of `key` (absent already is fine). */
export async function removeNote(root: string, key: string): Promise<void> {
  await rm(noteFileOf(root, key), { force: true });
  // A name too long for the earlier suffix never had a note there.
  await rm(earlierNoteFileOf(root, key), { force: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENAMETOOLONG') throw err;
  });
}
