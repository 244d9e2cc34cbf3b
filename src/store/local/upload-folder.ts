import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { UploadedPart } from '../object-store.js';
import { TEMP_PREFIX } from './write-primitives.js';

/**
 * The folder of one open upload in parts on the local store, `<root>/.multipart/<id>/`:
 * `upload.json` (its key, uploader and opening time) and its parts, each `<number>.<sha256>`.
 */

/** Folder of open uploads under the root: a dot name, so never a key, never listed or served. */
export const MULTIPART_DIR = '.multipart';
export const UPLOAD_ID = /^[0-9a-f]{32}$/;
export const PART_FILE = /^(\d{5})\.([0-9a-f]{64})$/;
const META_FILE = 'upload.json';

export interface UploadMeta {
  readonly key: string;
  readonly uploader?: string;
  readonly created: number;
  /** The SHA-256 declared for the joined bytes (docs/api.md, "Checked transfers"). */
  readonly sha256?: string;
}

/** The start of a part's file name: its number in five digits and a dot (the ETag follows). */
export function partPrefix(partNumber: number): string {
  return `${String(partNumber).padStart(5, '0')}.`;
}

/** Writes `upload.json` whole or not at all (a temporary file renamed into place). */
export async function writeUploadMeta(dir: string, meta: UploadMeta): Promise<void> {
  const temp = join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}.json`);
  await writeFile(temp, JSON.stringify(meta), { flag: 'wx' });
  await rename(temp, join(dir, META_FILE));
}

/** The upload's `upload.json`, or undefined when the folder or file is gone. */
export async function readUploadMeta(dir: string): Promise<UploadMeta | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, META_FILE), 'utf8')) as UploadMeta;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The parts stored in the folder, the newest copy of each part number, in order. */
export async function newestParts(dir: string): Promise<UploadedPart[]> {
    const newest = new Map<number, UploadedPart & { at: number }>();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = PART_FILE.exec(name);
    if (!m) continue;
    const s = await stat(join(dir, name)).catch(() => undefined);
    if (!s) continue;
    const partNumber = Number(m[1]);
    const seen = newest.get(partNumber);
    if (!seen || s.mtimeMs > seen.at) newest.set(partNumber, { partNumber, etag: m[2]!, size: s.size, at: s.mtimeMs });
  }
  return [...newest.values()].sort((a, b) => a.partNumber - b.partNumber).map(({ partNumber, etag, size }) => ({ partNumber, etag, size }));
}
