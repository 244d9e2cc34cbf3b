import { parseFileName, type ScienceFileName } from './file-name.js';
import { exampleFileName } from './naming-errors.js';
import type { MissionConfig } from './mission-config.js';
import type { NamingRule } from './naming-errors.js';
import { storedDirectory, storedPath } from './stored-path.js';

/** What a client-supplied path (full stored path or bare file name) refers to. */
export type RequestPath =
  | { readonly kind: 'file'; readonly name: ScienceFileName; readonly path: string }
  /** Nothing that looks like a file name at the end of the path. */
  | { readonly kind: 'no_file' }
  | { readonly kind: 'invalid_name'; readonly rule: NamingRule; readonly message: string }
  /** A valid name under a directory other than its canonical one. */
  | { readonly kind: 'wrong_directory'; readonly expected: string };

/** The stored path of the mission's example name, for messages that show one. */
export function exampleStoredPath(mission: MissionConfig): string {
  const parsed = parseFileName(exampleFileName(mission), mission);
  return parsed.ok ? storedPath(parsed.value) : exampleFileName(mission);
}

/** A valid name under folders other than its canonical ones (upload refuses it; the CLI checks first). */
export function wrongDirectoryMessage(expected: string): string {
  return `The path does not match the file name's stored location. Expected ${expected} (or the bare file name).`;
}

/**
 * Resolves `imap/swe/l1a/2024/01/<name>` or a bare `<name>`. The stored path is always
 * rebuilt from the parsed name, never taken from the input, so no client path (`..`,
 * encoded slashes, NUL) can name anything outside the store's canonical layout.
 */
export function resolveRequestPath(raw: string, mission: MissionConfig): RequestPath {
  const slash = raw.lastIndexOf('/');
  const fileName = raw.slice(slash + 1);
  if (fileName === '' || !fileName.includes('.')) return { kind: 'no_file' };
  const parsed = parseFileName(fileName, mission);
  if (!parsed.ok) return { kind: 'invalid_name', rule: parsed.rule, message: parsed.message };
  const path = storedPath(parsed.value);
  if (slash >= 0) {
    const directory = raw.slice(0, slash).replace(/^\/+/, '');
    if (directory !== storedDirectory(parsed.value)) return { kind: 'wrong_directory', expected: path };
  }
  return { kind: 'file', name: parsed.value, path };
}
