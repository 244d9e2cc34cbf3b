import { ingestCreatedObjects, parseObjectCreatedEvent, type ObjectCreatedReport, type ServiceContext } from '../service/index.js';
import { cachedContext, contextFromEnvironment } from './lambda-context.js';

/**
 * S3 object-created events -> the one idempotent ingest. Takes the S3 notification
 * format (S3 -> Lambda) and the EventBridge format (S3 -> EventBridge -> Lambda).
 * A failure to reach the store or catalog throws, so Lambda retries the event; an
 * event of another shape is logged and dropped, as retrying cannot help it.
 */
export function makeIngestHandler(context: () => Promise<ServiceContext>) {
  return async function handle(event: unknown): Promise<ObjectCreatedReport | { error: string }> {
    const ctx = await context();
    const parsed = parseObjectCreatedEvent(event);
    if (!parsed.ok) {
      ctx.log.error({ event }, `s3 ingest: unrecognised event. ${parsed.message}`);
      return { error: parsed.message };
    }
    const report = await ingestCreatedObjects(ctx, parsed.created, parsed.ignored);
    ctx.log.info({ indexed: report.indexed.length, exists: report.exists.length, skipped: report.skipped, absent: report.absent }, 's3 ingest');
    return report;
  };
}

/** The Lambda entry point: `dist/lambda/s3-ingest-handler.handler`. */
export const handler = makeIngestHandler(cachedContext(() => contextFromEnvironment()));
