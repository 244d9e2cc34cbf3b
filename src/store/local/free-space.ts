import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SpaceReading, StoreSpace } from '../object-store.js';

/**
 * The free-space watermark of the local store (docs/deploy.md "Free space"): below it, new
 * uploads are refused with 507 before the disk is full, so records, logs and uploads already
 * under way keep the room they need.
 */
export type MinFree = { readonly percent: number } | { readonly bytes: number };

/** SDC_MIN_FREE's default: 5% of the store's file system. */
export const DEFAULT_MIN_FREE: MinFree = Object.freeze({ percent: 5 });

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** `5%`, `20GiB`, `500MB`, `1073741824` (bytes); `0` turns the watermark off. Undefined when `raw` is none of these. */
export function parseMinFree(raw: string): MinFree | undefined {
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(raw.trim());
  if (percent) {
    const value = Number(percent[1]);
    return value <= 100 ? Object.freeze({ percent: value }) : undefined;
  }
  const size = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = UNITS[size?.[2]?.toLowerCase() ?? 'none'];
  if (!size || unit === undefined) return undefined;
  const bytes = Math.round(Number(size[1]) * unit);
  return Number.isSafeInteger(bytes) ? Object.freeze({ bytes }) : undefined;
}

/** How long one look at the file system stands: an upload request must not pay a system call each. */
const READING_EVERY_MS = 1000;

/** The local store's file system, looked at (statfs) at most once a READING_EVERY_MS. */
export class FreeSpace implements StoreSpace {
  private last: { at: number; reading: SpaceReading | undefined } = { at: -Infinity, reading: undefined };

  constructor(
    private readonly root: string,
    readonly minFree: MinFree = DEFAULT_MIN_FREE,
  ) {}

  reading(): SpaceReading | undefined {
    const now = Date.now();
    if (now - this.last.at >= READING_EVERY_MS) this.last = { at: now, reading: this.look() };
    return this.last.reading;
  }

  private look(): SpaceReading | undefined {
    // The root is made at the first write: until then its nearest existing folder tells the file system.
    for (let folder = this.root; ; folder = dirname(folder)) {
      try {
        const fs = statfsSync(folder);
        // bavail: what an unprivileged process (this service) may still write, not the root's reserve.
        const free = fs.bavail * fs.bsize;
        const size = fs.blocks * fs.bsize;
        const minFree = 'percent' in this.minFree ? Math.ceil((size * this.minFree.percent) / 100) : this.minFree.bytes;
        return Object.freeze({ free, size, minFree, low: free < minFree });
      } catch {
        if (dirname(folder) === folder) return undefined;
      }
    }
  }
}
