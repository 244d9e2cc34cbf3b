import { resolveRequestPath } from '../mission/index.js';
import { text, type Envelope } from './envelope.js';
import { ingest } from './ingest.js';
import { messages } from './messages.js';
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
      return text(400, messages.noFileInPath());
    case 'invalid_name':
      return text(400, resolved.message);
    case 'wrong_directory':
      return text(404, messages.notFound(requestPath, ctx.mission));
    case 'file':
      break;
  }
  const path = resolved.path;
  if (!(await ctx.catalog.get(path))) {
    // Stored without a record, or waiting under a staging key (S3): index it on the spot.
    if (!(await ctx.store.head(path)) && !(await ingestStagedFor(ctx, path))) return text(404, messages.notFound(requestPath, ctx.mission));
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
