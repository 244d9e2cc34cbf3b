import { readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsync, tempFileIn } from './write-primitives.js';

/**
 * What the local store keeps beside each file it writes: who uploaded it (the name the signed
 * address carried), when the bytes became the file, and their size and SHA-256. Written before
 * the file appears under its key, so a crash between storing and indexing, or a catalog rebuilt
 * from the store (`sdc reconcile`), brings back the uploader and the ingestion date exactly
 * (docs/reliability.md). A note whose size or SHA-256 is not the file's is ignored.
 */
export interface ObjectNote {
  readonly uploader?: string;
  readonly ingestion_date: string;
  readonly size: number;
  readonly sha256: string;
}

/**
 * `.<file name>.sdc` in the file's folder: a dot name, which no stored path has, so listings,
 * the store's GET route (dotfiles denied) and keys never see it.
 */
export function noteFileOf(file: string): string {
  return join(dirname(file), `.${basename(file)}.sdc`);
}

/** Writes the note of `file` durably (temporary file, fsync, rename), replacing any earlier one. */
export async function writeNote(file: string, note: ObjectNote): Promise<void> {
  const temp = tempFileIn(dirname(file));
  await writeFile(temp, `${JSON.stringify(note)}\n`, { flag: 'wx', mode: 0o644 });
  await fsync(temp);
  await rename(temp, noteFileOf(file));
}

/** The note of `file`, when there is a readable one. */
export async function readNote(file: string): Promise<ObjectNote | undefined> {
  let text: string;
  try {
    text = await readFile(noteFileOf(file), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const note = JSON.parse(text) as Partial<ObjectNote>;
    if (typeof note.ingestion_date !== 'string' || Number.isNaN(Date.parse(note.ingestion_date))) return undefined;
    if (typeof note.size !== 'number' || typeof note.sha256 !== 'string') return undefined;
    if (note.uploader !== undefined && typeof note.uploader !== 'string') return undefined;
    return note as ObjectNote;
  } catch {
    return undefined;
  }
}
