import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { resolveRequestPath } from '../mission/index.js';
import { requestDownloadAddress } from './api-calls.js';
import type { ArchiveRecord } from './archive-record.js';
import { BadResponseError, IntegrityError, InvalidNameError, LocalFileError, NetworkError } from './client-errors.js';
import type { ClientContext, ProgressListener } from './client-context.js';
import { localPathOf } from './data-dir-paths.js';
import { sha256File } from './file-digest.js';
import { answerError, discard } from './http-transport.js';
import { findRecord } from './query-records.js';
import { withRetry } from './retry.js';

export interface DownloadOptions {
  /** The local data directory: the file lands at `<dest>/<stored path>`. */
  readonly dest: string;
  /** Fetch even when an identical copy is already there. */
  readonly force?: boolean;
  /** The catalog's record when the caller has it (saves a query); else it is looked up. */
  readonly record?: ArchiveRecord;
  readonly onProgress?: ProgressListener;
}

export interface DownloadResult {
  readonly path: string;
  readonly localPath: string;
  /** `present`: an identical copy was already there, nothing was fetched. */
  readonly status: 'downloaded' | 'present';
  /** Bytes already on disk from an interrupted run, not fetched again. */
  readonly resumedFrom: number;
  /** The bytes matched the catalog's SHA-256, or the store's Repr-Digest, or both (each that was given). */
  readonly verified: boolean;
}

/** Suffix of a download in progress; kept on failure so the next run resumes it. */
export const PARTIAL_SUFFIX = '.part';

/**
 * Downloads one file into the local mirror: skips an identical copy, writes to
 * `<file>.part` and renames when complete, resumes a `.part` with a Range request
 * (also between retries of one run), and checks size and SHA-256 against the catalog and
 * against the store's Repr-Digest when it answers one (docs/client.md, "Checked transfers").
 * Stored files never change, so a resumed prefix is checked by the final hash alone;
 * if that fails the file is fetched once more from the start, then given up on.
 */
export async function downloadFile(ctx: ClientContext, pathOrName: string, options: DownloadOptions): Promise<DownloadResult> {
  const path = await storedPathOf(ctx, pathOrName);
  const localPath = localPathOf(options.dest, path);
  const record = options.record ?? (await findRecord(ctx, path));
  if (!options.force && (await matches(localPath, record))) {
    return { path, localPath, status: 'present', resumedFrom: 0, verified: true };
  }
  await mkdir(dirname(localPath), { recursive: true });
  const part = localPath + PARTIAL_SUFFIX;
  for (let fresh = false; ; fresh = true) {
    if (fresh) await rm(part, { force: true });
    const leftOver = await fileSizeOrZero(part);
    const resumedFrom = record?.size !== undefined && leftOver > record.size ? 0 : leftOver;
    // The first attempt starts from the size just read; a retry reads it again (a cut transfer grew it).
    let known: number | undefined = leftOver;
    const attempt = () => {
      const offset = known;
      known = undefined;
      return fetchInto(ctx, path, part, record?.size, options.onProgress, offset);
    };
    const fetched = await withRetry(ctx.retry, attempt, ctx.onRetry);
    const problem = await integrityProblem(part, record, fetched);
    if (problem === undefined) {
      await rename(part, localPath);
      return { path, localPath, status: 'downloaded', resumedFrom, verified: record?.sha256 !== undefined || fetched?.announced !== undefined };
    }
    if (fresh) {
      await rm(part, { force: true });
      throw new IntegrityError(`${path}: ${problem}`);
    }
  }
}

/**
 * The canonical stored path of a full path or bare name. A name that breaks the rules
 * fails here with the server's own message, before any request; anything else odd
 * (no file name, wrong folders) is put to the server, whose answer is the error.
 */
async function storedPathOf(ctx: ClientContext, pathOrName: string): Promise<string> {
  const resolved = resolveRequestPath(pathOrName, ctx.mission);
  if (resolved.kind === 'file') return resolved.path;
  if (resolved.kind === 'invalid_name') throw new InvalidNameError(resolved.message);
  await requestDownloadAddress(ctx, pathOrName);
  throw new BadResponseError(`the server offered ${pathOrName} for download, which is not a stored path`);
}

/** The size and SHA-256 of a file as it was written, from its first byte to its last. */
interface Written {
  readonly size: number;
  readonly sha256: string;
}

/** What one attempt learnt: the whole file's digest when it wrote it whole; the store's own digest when it said one. */
interface Fetched {
  readonly written?: Written;
  /** Hex SHA-256 of the store's `Repr-Digest` (RFC 9530; the local store's GET answers it). */
  readonly announced?: string;
}

/** The SHA-256 (hex) a `Repr-Digest` header announces, when it names one. */
export function announcedSha256(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  const m = value === undefined ? null : /(?:^|,)\s*sha-256\s*=\s*:([A-Za-z0-9+/]+=*):/i.exec(value);
  const bytes = m ? Buffer.from(m[1]!, 'base64') : undefined;
  return bytes?.length === 32 ? bytes.toString('hex') : undefined;
}

/**
 * One attempt: from the end of the partial file (if any) to the end of the object. A file
 * written whole is hashed as its bytes go by (its digest answered), so that checking it does
 * not read it back (docs/performance.md, "Clients at scale"); a resumed one is not.
 */
async function fetchInto(
  ctx: ClientContext,
  path: string,
  part: string,
  size: number | undefined,
  onProgress: ProgressListener | undefined,
  knownOffset: number | undefined,
): Promise<Fetched | undefined> {
  let offset = knownOffset ?? (await fileSizeOrZero(part));
  if (size !== undefined && offset > size) offset = await truncate(part);
  if (size !== undefined && offset === size && offset > 0) return undefined;
  const address = await requestDownloadAddress(ctx, path);
  let res = await ctx.transport.signed(address, { headers: offset > 0 ? { range: `bytes=${offset}-` } : {} });
  if (offset > 0 && res.statusCode === 416 && unsatisfiedTotal(res.headers['content-range']) === offset) {
    // The partial file is already the whole object (its size was not known beforehand): nothing
    // is left to fetch; the digest check decides (docs/client.md, "Checked transfers").
    const announced = announcedSha256(res.headers['repr-digest']);
    await discard(res);
    onProgress?.(offset, offset);
    return announced === undefined ? undefined : { announced };
  }
  if (offset > 0 && (res.statusCode === 416 || (res.statusCode === 206 && rangeStart(res.headers['content-range']) !== offset))) {
    // The partial file does not fit the object: start over.
    await discard(res);
    offset = await truncate(part);
    res = await ctx.transport.signed(address, {});
  }
  if (res.statusCode === 200) offset = 0;
  else if (res.statusCode !== 206) throw await answerError('transfer', res);
  // The representation's digest: the whole file's, on a 206 as on a 200.
  const announced = announcedSha256(res.headers['repr-digest']);
  const total = size ?? contentTotal(res.headers, offset);
  let done = offset;
  onProgress?.(done, total);
  const digest = offset === 0 ? createHash('sha256') : undefined;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      done += chunk.length;
      digest?.update(chunk);
      onProgress?.(done, total);
      next(null, chunk);
    },
  });
  let cut: Error | undefined;
  res.body.once('error', (err) => (cut = err));
  try {
    await pipeline(res.body, meter, createWriteStream(part, { flags: offset > 0 ? 'a' : 'w' }));
  } catch (err) {
    if (cut) throw new NetworkError(`${path}: transfer cut off after ${done} bytes (${(cut as NodeJS.ErrnoException).code ?? cut.message})`, undefined, { cause: cut });
    throw new LocalFileError(`cannot write ${part}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, undefined, { cause: err });
  }
  return { written: digest && { size: done, sha256: digest.digest('hex') }, announced };
}

/** Whether the local file is the catalog's file: same size, then same SHA-256. */
async function matches(localPath: string, record: ArchiveRecord | undefined): Promise<boolean> {
  if (record?.sha256 === undefined) return false;
  const size = await fileSizeOrZero(localPath, -1);
  if (size !== record.size && record.size !== undefined) return false;
  return size >= 0 && (await sha256File(localPath)) === record.sha256;
}

/**
 * What is wrong with the file against its record and the digest the store announced
 * (Repr-Digest); `fetched.written` is what the fetch wrote, when it wrote the whole file.
 */
async function integrityProblem(file: string, record: ArchiveRecord | undefined, fetched: Fetched | undefined): Promise<string | undefined> {
  const written = fetched?.written;
  const announced = fetched?.announced;
  if (record === undefined && announced === undefined) return undefined;
  const size = written?.size ?? (await fileSizeOrZero(file));
  if (record?.size !== undefined && size !== record.size) return `got ${size} bytes, the catalog says ${record.size}`;
  if (record?.sha256 === undefined && announced === undefined) return undefined;
  const sha256 = written?.sha256 ?? (await sha256File(file));
  if (announced !== undefined && sha256 !== announced) return `SHA-256 ${sha256} differs from the store's Repr-Digest ${announced}`;
  return record?.sha256 === undefined || sha256 === record.sha256 ? undefined : `SHA-256 ${sha256} differs from the catalog's ${record.sha256}`;
}

async function fileSizeOrZero(file: string, missing = 0): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return missing;
    throw new LocalFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

async function truncate(file: string): Promise<0> {
  await rm(file, { force: true });
  return 0;
}

/** `bytes 100-999/1000` -> 100. */
function rangeStart(header: string | string[] | undefined): number | undefined {
  const m = typeof header === 'string' ? /^bytes (\d+)-\d+\/(?:\d+|\*)$/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

// A 416's Content-Range (RFC 9110 §14.4), "bytes */1000" -> 1000.
function unsatisfiedTotal(header: string | string[] | undefined): number | undefined {
  const m = typeof header === 'string' ? /^bytes \*\/(\d+)$/.exec(header) : null;
  return m ? Number(m[1]) : undefined;
}

function contentTotal(headers: Record<string, string | string[] | undefined>, offset: number): number | undefined {
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && headers['content-length'] !== undefined ? offset + length : undefined;
}
