import { fixityFailed, type FileRecord } from '../catalog/index.js';
import { FILE_NOT_FOUND, FILE_WITHDRAWN, FIXITY_FAILED, INVALID_NAME, NO_FILE_IN_PATH, NOT_RELEASED, raise, WITHDRAWN_NEEDS_CURATOR, type ServerError } from '../errors/index.js';
import { exampleStoredPath, resolveRequestPath } from '../mission/index.js';
import { failure, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import { isOutOfSpace } from './out-of-space.js';
import { ingestStagedFor } from './staged-uploads.js';
import type { ServiceContext } from './service-context.js';
import { ANONYMOUS, byteAccess, type Caller } from './visibility.js';

/**
 * GET /download/{path} (docs/api.md, The three endpoints): full stored path or bare file name ->
 * 302 to a signed, followable address of the bytes. Answered at once when the catalog and
 * the store answer at once (maybe-async.ts).
 */
export function download(ctx: ServiceContext, requestPath: string, evidence: WithdrawnAccess = {}, caller: Caller = ANONYMOUS): MaybePromise<Envelope> {
  if (evidence.include && !evidence.curator) return failure(WITHDRAWN_NEEDS_CURATOR.create());
  const resolved = resolveRequestPath(requestPath, ctx.mission);
  switch (resolved.kind) {
    case 'no_file':
      return failure(NO_FILE_IN_PATH.create());
    case 'invalid_name':
      return failure(INVALID_NAME.create(resolved.message));
    case 'wrong_directory':
      return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
    case 'file':
      break;
  }
  const path = resolved.path;
  return andThen(ctx.catalog.get(path), (record) => {
    if (record === undefined) return unrecorded(ctx, path, requestPath);
    // Who sees what (visibility.ts): a hidden file answers exactly as a name never stored.
    const access = byteAccess(ctx, caller, record);
    if (access === 'hidden') return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
    if (access === 'not_released') return failure(NOT_RELEASED.create(path, record.release_date));
    if (record.status === 'withdrawn' && !evidence.include) return gone(record);
    // Never served as if good (docs/api.md "Damaged files"); the record itself stays queryable.
    if (fixityFailed(record.fixity)) return failure(FIXITY_FAILED.create(path, record.verified_date ?? 'an earlier date', record.fixity));
    return redirect(ctx, path, record.status === 'withdrawn');
  });
}

/** `?withdrawn=include` from a curator: the kept bytes of a withdrawn file (docs/api.md "Withdrawn files"). */
export interface WithdrawnAccess {
  readonly include?: boolean;
  readonly curator?: boolean;
}

/** 410 Gone: when, why, and the replacement (also as a Link, RFC 5829 successor-version). */
export function gone(record: FileRecord): Envelope {
  return failure(withdrawnError(record));
}

/** The 410 of a withdrawn file, as the download and the local store's signed GET answer it. */
export function withdrawnError(record: FileRecord): ServerError {
  const replacement = record.superseded_by;
  const link: Record<string, string> = replacement === undefined ? {} : { Link: `</download/${encodeURI(replacement)}>; rel="successor-version"` };
  return raise(FILE_WITHDRAWN, [record.file_path, record.withdrawn_date ?? '', record.withdrawn_reason ?? '', replacement], { headers: link });
}

/** The 302 to the stored bytes' signed address (`evidence`: a withdrawn file's, for a curator). */
function redirect(ctx: ServiceContext, path: string, evidence = false): MaybePromise<Envelope> {
  return andThen(
    ctx.store.presignGet(path, ctx.downloadTtl, evidence ? { evidence } : undefined),
    (url): Envelope => ({
      statusCode: 302,
      headers: { 'Content-Type': 'text/html', Location: url },
      body: { download_url: url },
    }),
  );
}

/** A path without a record: stored without one, or waiting under a staging key (S3), it is indexed on the spot. */
function unrecorded(ctx: ServiceContext, path: string, requestPath: string): MaybePromise<Envelope> {
  return andThen(ctx.store.head(path), (stored) =>
    stored
      ? indexThenRedirect(ctx, path)
      : andThen(ingestStagedFor(ctx, path), (state) => (state === 'stored' ? indexThenRedirect(ctx, path) : failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission))))),
  );
}

async function indexThenRedirect(ctx: ServiceContext, path: string): Promise<Envelope> {
  // On a full disk the record waits; the bytes are served anyway.
  await ingest(ctx, path).catch((err: unknown) => {
    if (!isOutOfSpace(err)) throw err;
    ctx.log.warn({ file_path: path }, 'out of space: not indexed now');
  });
  return redirect(ctx, path);
}
