import { exampleStoredPath, namingMessage, resolveRequestPath } from '../mission/index.js';
import { ALREADY_EXISTS, INVALID_DIGEST, INVALID_NAME, UPLOAD_UNDER_WAY, WRONG_DIRECTORY } from '../errors/index.js';
import { failure, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import { isOutOfSpace, lowSpaceRefusal } from './out-of-space.js';
import { recordedName } from './recorded-name.js';
import { promoteWaitingFor } from './promotion.js';
import type { ServiceContext } from './service-context.js';
import { declaredSha256 } from '../wire/content-digest.js';

/**
 * GET /upload/{path} (docs/api.md, The three endpoints): checks the name, refuses a file that is
 * stored or indexed (409), else hands out a signed PUT address. Reserves nothing:
 * the store's write refuses a second copy, whoever asked first. `uploader`, the
 * caller's API key name, is bound into the address and kept in the record. Answered at
 * once when the catalog and the store answer at once (maybe-async.ts). `sha256`, the file's
 * declared SHA-256 (`?sha256=`), binds the address to those bytes (docs/api.md, "Checked transfers").
 */
export function upload(ctx: ServiceContext, requestPath: string, uploader?: string, sha256?: string): MaybePromise<Envelope> {
  const declared = sha256 === undefined ? undefined : declaredSha256(sha256);
  if (declared === null) return failure(INVALID_DIGEST.create(sha256!.slice(0, 100)));
  return andThen(freeName(ctx, requestPath), (checked) =>
    typeof checked !== 'string'
      ? checked
      : andThen(ctx.store.presignPut(checked, ctx.uploadTtl, uploader, declared), (url): Envelope => ({ statusCode: 200, body: url })),
  );
}


/**
 * The checks of an upload request: the name's rules (400), then a file stored or indexed
 * under it (409), then the store's free space (507). The canonical stored path when the name
 * is free and there is room, else the refusal.
 */
export function freeName(ctx: ServiceContext, requestPath: string): MaybePromise<string | Envelope> {
  return andThen(nameChecks(ctx, requestPath), (checked) => {
    const lowSpace = typeof checked === 'string' ? lowSpaceRefusal(ctx.store, checked) : undefined;
    return lowSpace ? failure(lowSpace) : checked;
  });
}

function nameChecks(ctx: ServiceContext, requestPath: string): MaybePromise<string | Envelope> {
  const resolved = resolveRequestPath(requestPath, ctx.mission);
  switch (resolved.kind) {
    case 'no_file':
      // Often the name was sent as a query parameter (/upload?file_name=...): say where it goes.
      return failure(INVALID_NAME.create(`${namingMessage('shape', ctx.mission)} The file's path goes in the URL path: /upload/${exampleStoredPath(ctx.mission)}`));
    case 'invalid_name':
      return failure(INVALID_NAME.create(resolved.message));
    case 'wrong_directory':
      return failure(WRONG_DIRECTORY.create(resolved.expected));
    case 'file':
      break;
  }
  const path = resolved.path;
  return andThen(recordedName(ctx, path), (taken) =>
    taken ? failure(taken) : andThen(ctx.store.head(path), (stored) => (stored ? indexUnrecorded(ctx, path) : takenByWaitingUpload(ctx, path))),
  );
}

/** Stored but not indexed (e.g. written straight to the store): index it now, space allowing; the name is taken. */
async function indexUnrecorded(ctx: ServiceContext, path: string): Promise<Envelope> {
  await ingest(ctx, path).catch((err: unknown) => {
    if (!isOutOfSpace(err)) throw err;
    ctx.log.warn({ file_path: path }, 'out of space: not indexed now');
  });
  return failure(ALREADY_EXISTS.create(path));
}

/**
 * Uploads of this very name waiting under a staging key (S3: PUTs to addresses handed out before,
 * whose notification has not come) decide whether it is taken: promoted now, the oldest first,
 * and no upload of another name (src/service/promotion.ts).
 */
function takenByWaitingUpload(ctx: ServiceContext, path: string): MaybePromise<string | Envelope> {
  return andThen(promoteWaitingFor(ctx, path), (waiting) => {
    if (waiting === 'stored') return failure(ALREADY_EXISTS.create(path));
    // Another promotion is writing the name (it holds the name's lease): it will be taken.
    if (waiting === 'busy') return failure(UPLOAD_UNDER_WAY.create(path));
    return path;
  });
}
