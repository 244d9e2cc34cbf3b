import { resolveRequestPath } from '../mission/index.js';
import { NoSuchUploadError, type CompletedPart, type MultipartUploads, type WriteGuard } from '../store/index.js';
import { ALREADY_EXISTS, DIGEST_MISMATCH, FILE_TOO_LARGE, INVALID_DIGEST, INVALID_MULTIPART_REQUEST, MULTIPART_NOT_OFFERED, NOT_A_FILE_PATH, UPLOAD_UNDER_WAY } from '../errors/index.js';
import { failure, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { isOutOfSpace } from './out-of-space.js';
import type { ServiceContext } from './service-context.js';
import { LONG_LEASE_WAIT_MS, underNameLease } from './name-lease.js';
import { recordedName } from './recorded-name.js';
import { promoteWaitingFor } from './promotion.js';
import { freeName } from './upload.js';
import { declaredSha256 } from '../wire/content-digest.js';

/** Part size handed out when the client does not say how large its file is. */
export const DEFAULT_PART_SIZE = 16 * 1024 * 1024;
/** Most part addresses one request hands out. */
export const MAX_ADDRESSES_PER_REQUEST = 1000;

/** What POST /uploads/{path} answers. */
export interface MultipartStart {
  readonly path: string;
  readonly uploadId: string;
  /** Size of every part but the last, bytes. */
  readonly partSize: number;
  readonly maxParts: number;
}

function partsOf(ctx: ServiceContext): MultipartUploads | Envelope {
  return ctx.store.multipart ?? failure(MULTIPART_NOT_OFFERED.create());
}

/** The canonical stored path a request names, or the 400 refusal. */
function storedPath(ctx: ServiceContext, requestPath: string): string | Envelope {
  const resolved = resolveRequestPath(requestPath, ctx.mission);
  return resolved.kind === 'file' ? resolved.path : failure(NOT_A_FILE_PATH.create(requestPath));
}

/** The part size for a file of `size` bytes: the default, or larger so that it fits in the parts allowed. */
export function partSizeFor(parts: Pick<MultipartUploads, 'minPartSize' | 'maxPartSize' | 'maxParts'>, size: number | undefined): number {
  const mib = 1024 * 1024;
  const needed = size === undefined ? 0 : Math.ceil(Math.ceil(size / parts.maxParts) / mib) * mib;
  return Math.min(parts.maxPartSize, Math.max(parts.minPartSize, DEFAULT_PART_SIZE, needed));
}

/**
 * POST /uploads/{path}: opens an upload in parts, with the checks of GET /upload (name
 * rules 400, a stored or indexed name 409). `size`, when the client gives it, sets a part
 * size large enough for the file (413 past what the store takes).
 */
export async function startMultipart(ctx: ServiceContext, requestPath: string, uploader?: string, size?: number, sha256?: string): Promise<Envelope> {
  const parts = partsOf(ctx);
  if (!('create' in parts)) return parts;
  // The digest declared for the whole file: completion refuses other bytes (docs/api.md, "Checked transfers").
  const declared = sha256 === undefined ? undefined : declaredSha256(sha256);
  if (declared === null) return failure(INVALID_DIGEST.create(sha256!.slice(0, 100)));
  const path = await freeName(ctx, requestPath);
  if (typeof path !== 'string') return path;
  const largest = Math.min(parts.maxSize, parts.maxParts * parts.maxPartSize);
  if (size !== undefined && size > largest) {
    return failure(FILE_TOO_LARGE.create(largest));
  }
  const uploadId = await parts.create(path, uploader, declared);
  const body: MultipartStart = { path, uploadId, partSize: partSizeFor(parts, size), maxParts: parts.maxParts };
  return { statusCode: 200, body };
}

/**
 * Every call on an open upload names its id and comes with the caller's API key (none without
 * keys): an upload opened with another key answers 404 as an unknown one (docs/trust.md).
 *
 * GET /uploads/{path}?uploadId=&parts=: the parts stored so far (`uploaded`, for a client
 * resuming) and signed PUT addresses of the parts asked for (`parts`, e.g. `1-16` or `3,7`).
 */
export async function multipartAddresses(ctx: ServiceContext, requestPath: string, uploadId: string, wanted: string | undefined, caller?: string): Promise<Envelope> {
  const parts = partsOf(ctx);
  if (!('create' in parts)) return parts;
  const path = storedPath(ctx, requestPath);
  if (typeof path !== 'string') return path;
  const numbers = wanted === undefined || wanted === '' ? [] : parsePartList(wanted, parts.maxParts);
  if (numbers === undefined) {
    return failure(INVALID_MULTIPART_REQUEST.create(`parts: a list of part numbers from 1 to ${parts.maxParts} such as 1-16 or 3,7, at most ${MAX_ADDRESSES_PER_REQUEST} at a time.`));
  }
  await parts.checkOwner(path, uploadId, caller);
  const uploaded = await parts.listParts(path, uploadId);
  const addresses = await Promise.all(
    numbers.map(async (partNumber) => ({ partNumber, url: await parts.presignPart(path, uploadId, partNumber, ctx.uploadTtl) })),
  );
  return { statusCode: 200, body: { path, uploadId, uploaded, parts: addresses } };
}

/**
 * POST /uploads/{path}?uploadId=: joins the named parts into the file. A name with a record
 * (even one whose object is missing) or an object is never given other bytes: 409, and the
 * upload is dropped. The record's size and SHA-256 are those of the bytes stored. The whole
 * completion holds the name's lease in the catalog (docs/deploy.md): it waits for another
 * promotion of the name to end (or its lease to expire), and a completion that cannot get
 * the lease in time answers 409 "under way", leaving its upload to be completed again.
 */
export async function completeMultipart(ctx: ServiceContext, requestPath: string, uploadId: string, body: unknown, caller?: string): Promise<Envelope> {
  const parts = partsOf(ctx);
  if (!('create' in parts)) return parts;
  const path = storedPath(ctx, requestPath);
  if (typeof path !== 'string') return path;
  const list = completedParts(body);
  if (list === undefined) return failure(INVALID_MULTIPART_REQUEST.create('Send {"parts": [{"partNumber": 1, "etag": "..."}, ...]}: each part with the ETag its PUT answered.'));
  // A completion sent again after its answer was lost, its upload no longer open: what it did.
  const earlier = () => completedEarlier(ctx, parts, path, uploadId, caller);
  try {
    await parts.checkOwner(path, uploadId, caller);
  } catch (err) {
    const done = err instanceof NoSuchUploadError ? await earlier() : undefined;
    if (done === undefined) throw err;
    return done;
  }
  // While another holds the name: once the name is taken, this upload has lost (no lease needed to say so).
  const takenMeanwhile = async () => ((await ctx.catalog.has(path)) || (await ctx.store.head(path)) ? 'taken' : undefined);
  const run = await underNameLease(ctx, path, LONG_LEASE_WAIT_MS, (guard) => completeHeld(ctx, parts, path, uploadId, list, guard, earlier), takenMeanwhile);
  if (!run.held && run.settled) {
    // Taken by this very upload, whose completion was cut (a killed instance that held the lease)?
    const done = await earlier();
    if (done) return done;
    await parts.abort(path, uploadId);
    ctx.log.warn({ file_path: path }, 'upload in parts refused: the name already holds a file, which stays');
    return failure(ALREADY_EXISTS.create(path));
  }
  if (!run.held) {
    ctx.log.warn({ file_path: path }, 'upload in parts not completed: another promotion of the name holds its lease');
    return failure(UPLOAD_UNDER_WAY.create(path));
  }
  return run.value;
}

/**
 * A completion sent again after its answer was lost or its instance killed (docs/api.md "Large
 * files: uploads in parts"): when this very upload, opened by this caller, stored the file under
 * the name (the store says so: `completedAs`), the same 200 as the first time, from the name's
 * record. A completion cut before its record leaves the bytes unrecorded: recorded now, as the
 * sweep would. Undefined otherwise (and on stores that cannot tell): the caller refuses as before.
 */
async function completedEarlier(ctx: ServiceContext, parts: MultipartUploads, path: string, uploadId: string, caller: string | undefined): Promise<Envelope | undefined> {
  const stored = await parts.completedAs?.(path, uploadId, caller);
  if (stored === undefined) return undefined;
  if (!(await ctx.catalog.has(path))) await ingest(ctx, path);
  // The record is of the bytes under the name: a note written by a completion that lost the name is not.
  const record = await ctx.catalog.get(path);
  if (record === undefined || record.size !== stored.size || (stored.sha256 !== undefined && record.sha256 !== stored.sha256)) return undefined;
  return { statusCode: 200, body: { path, size: record.size, sha256: record.sha256 } };
}

async function completeHeld(
  ctx: ServiceContext,
  parts: MultipartUploads,
  path: string,
  uploadId: string,
  list: CompletedPart[],
  guard: WriteGuard,
  earlier: () => Promise<Envelope | undefined>,
): Promise<Envelope> {
  // A record, or (S3) a single PUT of the name waiting under its staging key, came first.
  const taken = await recordedName(ctx, path);
  if (taken || (await promoteWaitingFor(ctx, path, guard)) === 'stored') {
    const done = await earlier();
    if (done) return done;
    await parts.abort(path, uploadId);
    return failure(taken ?? ALREADY_EXISTS.create(path));
  }
  let result;
  try {
    result = await parts.complete(path, uploadId, list, guard);
  } catch (err) {
    const done = err instanceof NoSuchUploadError ? await earlier() : undefined;
    if (done === undefined) throw err;
    return done;
  }
  if (result.outcome === 'interrupted') {
    ctx.log.warn({ file_path: path }, 'upload in parts not completed: the lease on its name was lost while writing; completing again continues');
    return failure(UPLOAD_UNDER_WAY.create(path));
  }
  if (result.outcome === 'mismatch') {
    ctx.log.warn({ file_path: path, declared_sha256: result.declared, received_sha256: result.received }, 'upload in parts refused: its bytes are not those declared; nothing stored');
    return failure(DIGEST_MISMATCH.create(path, result.declared, result.received));
  }
  if (result.outcome === 'exists') {
    // This upload's own bytes, promoted by a completion cut before its record: recorded now, answered 200.
    const done = await earlier();
    if (done) {
      if (result.assembled) await ctx.store.staging?.discard(result.assembled);
      return done;
    }
    // The name was taken meanwhile: make sure it is indexed, then refuse.
    await ingest(ctx, path).catch((err: unknown) => {
      if (!isOutOfSpace(err)) throw err;
    });
    ctx.log.warn({ file_path: path }, 'upload in parts refused: the name already holds a file, which stays');
    return failure(ALREADY_EXISTS.create(path));
  }
  // A record that cannot be written now (or a crash before it) leaves the joined object, which
  // the sweep of any instance promotes and indexes within seconds (src/service/ingest-sweep.ts).
  await ingest(ctx, path, result.digest, result.digest.uploader);
  if (result.assembled) await ctx.store.staging?.discard(result.assembled);
  return { statusCode: 200, body: { path, size: result.digest.size, sha256: result.digest.sha256 } };
}

/** DELETE /uploads/{path}?uploadId=: drops an open upload and its parts. */
export async function abortMultipart(ctx: ServiceContext, requestPath: string, uploadId: string, caller?: string): Promise<Envelope> {
  const parts = partsOf(ctx);
  if (!('create' in parts)) return parts;
  const path = storedPath(ctx, requestPath);
  if (typeof path !== 'string') return path;
  try {
    await parts.checkOwner(path, uploadId, caller);
  } catch (err) {
    // Absent already is fine (abort is idempotent); another's upload is not touched, and looks absent.
    if (err instanceof NoSuchUploadError) return { statusCode: 204, body: '' };
    throw err;
  }
  await parts.abort(path, uploadId);
  return { statusCode: 204, body: '' };
}

function completedParts(body: unknown): CompletedPart[] | undefined {
  const list = (body as { parts?: unknown } | undefined)?.parts;
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const out: CompletedPart[] = [];
  for (const item of list) {
    const { partNumber, etag } = (item ?? {}) as { partNumber?: unknown; etag?: unknown };
    if (typeof partNumber !== 'number' || !Number.isInteger(partNumber) || typeof etag !== 'string' || etag.length > 200) return undefined;
    out.push({ partNumber, etag });
  }
  return out;
}

/** `1-16`, `3,7`, `1-4,9`: the part numbers, or undefined when malformed or too many. */
export function parsePartList(spec: string, maxParts: number): number[] | undefined {
  const numbers: number[] = [];
  for (const piece of spec.split(',')) {
    const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(piece.trim());
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to > maxParts || to < from || numbers.length + (to - from + 1) > MAX_ADDRESSES_PER_REQUEST) return undefined;
    for (let n = from; n <= to; n++) numbers.push(n);
  }
  return numbers;
}
