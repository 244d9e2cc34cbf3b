import { exampleStoredPath, namingMessage, resolveRequestPath } from '../mission/index.js';
import { ALREADY_EXISTS, INVALID_NAME, WRONG_DIRECTORY } from '../errors/index.js';
import { failure, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { isOutOfSpace } from './out-of-space.js';
import { ingestStagedFor } from './staged-uploads.js';
import type { ServiceContext } from './service-context.js';

/**
 * GET /upload/{path} (interface spec 4.1): checks the name, refuses a file that is
 * stored or indexed (409), else hands out a signed PUT address. Reserves nothing:
 * the store's write refuses a second copy, whoever asked first. `uploader`, the
 * caller's API key name, is bound into the address and kept in the record.
 */
export async function upload(ctx: ServiceContext, requestPath: string, uploader?: string): Promise<Envelope> {
  const checked = await freeName(ctx, requestPath);
  if (typeof checked !== 'string') return checked;
  return { statusCode: 200, body: await ctx.store.presignPut(checked, ctx.uploadTtl, uploader) };
}

/**
 * The checks of an upload request: the name's rules (400), then a file stored or indexed
 * under it (409). The canonical stored path when the name is free, else the refusal.
 */
export async function freeName(ctx: ServiceContext, requestPath: string): Promise<string | Envelope> {
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
  if (await ctx.catalog.get(path)) return failure(ALREADY_EXISTS.create(path));
  if (await ctx.store.head(path)) {
    // Stored but not indexed (e.g. written straight to the store): index it now, space allowing.
    await ingest(ctx, path).catch((err: unknown) => {
      if (!isOutOfSpace(err)) throw err;
      ctx.log.warn({ file_path: path }, 'out of space: not indexed now');
    });
    return failure(ALREADY_EXISTS.create(path));
  }
  // An upload waiting under a staging key (S3) whose notification has not come: promote it now.
  if (await ingestStagedFor(ctx, path)) return failure(ALREADY_EXISTS.create(path));
  return path;
}
