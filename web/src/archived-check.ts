import type { FileRecord } from './api.js';

/** Largest file the page hashes to compare with the archive's copy (SubtleCrypto digests a whole buffer). */
export const HASH_LIMIT = 512 * 1024 * 1024;

/** What the archive holds under a name the page was about to upload. */
export type ArchivedCopy =
  | { readonly kind: 'same'; readonly sha256: string }
  | { readonly kind: 'different'; readonly archived: string; readonly local: string }
  | { readonly kind: 'unknown'; readonly why: string };

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * After a 409: does the archive hold these very bytes (a harmless repeat) or others under
 * the name (a conflict)? Compares the file's SHA-256 with the record's (GET /query?file_path=),
 * as `sdc upload` does for re-runs (docs/client.md).
 */
export async function compareWithArchive(path: string, file: File, headers: Record<string, string>): Promise<ArchivedCopy> {
  // SubtleCrypto exists only in a secure context (https, localhost).
  if (!globalThis.crypto?.subtle) return { kind: 'unknown', why: 'this page cannot compute a SHA-256 over plain http' };
  if (file.size > HASH_LIMIT) return { kind: 'unknown', why: 'the file is too large for the page to compare' };
  let record: FileRecord | undefined;
  try {
    const res = await fetch(`/query?${new URLSearchParams({ file_path: path }).toString()}`, { headers });
    if (res.ok) [record] = (await res.json()) as FileRecord[];
  } catch {
    // no answer: say so below
  }
  if (!record) return { kind: 'unknown', why: 'the archive\'s record could not be read' };
  const local = hex(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return local === record.sha256 ? { kind: 'same', sha256: local } : { kind: 'different', archived: record.sha256, local };
}
