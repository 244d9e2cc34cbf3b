import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  exampleStoredPath,
  namingMessage,
  resolveRequestPath,
  wrongDirectoryMessage,
  type MissionConfig,
} from '../mission/index.js';
import { InvalidNameError, LocalFileError } from './client-errors.js';

/**
 * The local data directory mirrors the archive (docs/api.md, File names and stored paths; The three endpoints): a file's
 * place under it is its stored path.
 */
export interface UploadTarget {
  /** What goes in `/upload/{path}`: the file's path relative to the data directory. */
  readonly requestPath: string;
  /** Where the archive will keep it. */
  readonly storedPath: string;
}

/**
 * Checks a local file for upload exactly as the server would, before any request: inside
 * the data directory, named by the convention, in its canonical folders (or at the top
 * of the data directory, which the server accepts as a bare name).
 */
export function uploadTarget(localFile: string, dataDir: string, mission: MissionConfig): UploadTarget {
  const root = resolve(dataDir);
  const rel = relative(root, resolve(localFile));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new LocalFileError(
      `${localFile} is outside the data directory ${root}. Upload takes a file inside it, at its stored path, e.g. ${join(root, ...exampleStoredPath(mission).split('/'))} (set the data directory with --data-dir or ${envPrefix(mission)}_DATA_DIR).`,
    );
  }
  const requestPath = rel.split(sep).join('/');
  const resolved = resolveRequestPath(requestPath, mission);
  switch (resolved.kind) {
    case 'no_file':
      throw new InvalidNameError(namingMessage('shape', mission));
    case 'invalid_name':
      throw new InvalidNameError(resolved.message);
    case 'wrong_directory':
      throw new InvalidNameError(wrongDirectoryMessage(resolved.expected));
    case 'file':
      return { requestPath, storedPath: resolved.path };
  }
}

/** Where a stored path lives under the data directory. */
export function localPathOf(dataDir: string, stored: string): string {
  return join(resolve(dataDir), ...stored.split('/'));
}

/** `imap` -> `IMAP`: the prefix of the mission's client variables (docs/client.md, Configuration). */
export function envPrefix(mission: MissionConfig): string {
  return mission.name.toUpperCase().replace(/-/g, '_');
}
