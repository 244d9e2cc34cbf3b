import { constants, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { NOT_A_REGULAR_FILE, raise } from '../../errors/index.js';

/** What a non-regular entry is, in words (the refusal and the operator's log say it). */
export function entryKind(stats: Stats): string {
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isDirectory()) return 'folder';
  if (stats.isSymbolicLink()) return 'symbolic link';
  return 'regular file';
}

/** A stored file opened for reading, and its fstat (the size and Last-Modified of what will be read). */
export interface OpenedFile {
  readonly handle: FileHandle;
  readonly stats: Stats;
}

/**
 * Opens a stored file for reading, only if it is a regular file (docs/trust.md, "Attacks tried on the
 * lifecycle"). O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
 * writer and hold one of Node's file threads meanwhile; O_NOFOLLOW: a symbolic link is never
 * followed. The handle's own fstat then decides, so nothing can be swapped in between; anything
 * not a regular file is closed at once and refused (SDC_NOT_A_REGULAR_FILE). For regular files
 * O_NONBLOCK changes nothing.
 */
export async function openRegularFile(path: string, key: string): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // A socket cannot be opened at all (ENXIO): say what is there, as for the others.
    const there = (err as NodeJS.ErrnoException).code === 'ENXIO' ? await lstat(path).catch(() => undefined) : undefined;
    throw there && !there.isFile() ? raise(NOT_A_REGULAR_FILE, [key, entryKind(there)]) : err;
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return { handle, stats };
    throw raise(NOT_A_REGULAR_FILE, [key, entryKind(stats)]);
  } catch (err) {
    await handle.close();
    throw err;
  }
}
