import { FILE_NOT_FOUND, INVALID_NAME, NO_FILE_IN_PATH } from '../errors/index.js';
import { exampleStoredPath, resolveRequestPath } from '../mission/index.js';
import { failure, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { isOutOfSpace } from './out-of-space.js';
import { ingestStagedFor } from './staged-uploads.js';
import type { ServiceContext } from './service-context.js';

/**
 * GET /download/{path} (interface spec 4.2): full stored path or bare file name ->
 * 302 to a signed, followable address of the bytes.
 */
export async function download(ctx: ServiceContext, requestPath: string): Promise<Envelope> {
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
  if (!(await ctx.catalog.get(path))) {
    // Stored without a record, or waiting under a staging key (S3): index it on the spot.
    if (!(await ctx.store.head(path)) && (await ingestStagedFor(ctx, path)) !== 'stored') return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
    // On a full disk the record waits; the bytes are served anyway.
    await ingest(ctx, path).catch((err: unknown) => {
      if (!isOutOfSpace(err)) throw err;
      ctx.log.warn({ file_path: path }, 'out of space: not indexed now');
    });
  }
  const url = await ctx.store.presignGet(path, ctx.downloadTtl);
  return {
    statusCode: 302,
    headers: { 'Content-Type': 'text/html', Location: url },
    body: { download_url: url },
  };
}
