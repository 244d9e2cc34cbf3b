import { reconcile, type ReconcileReport, type ServiceContext } from '../service/index.js';
import { cachedContext, contextFromEnvironment } from './lambda-context.js';

/** Records without objects named in the function's answer (the log has every one). */
const LISTED = 100;

/**
 * `sdc reconcile` as a Lambda function, run on a schedule (EventBridge Scheduler): objects
 * without records are indexed, records without objects are logged (never deleted). The
 * event's content is not used. The function's timeout (at most 15 minutes) bounds one
 * run; an interrupted run is harmless and the next one continues the work.
 */
export function makeReconcileHandler(context: () => Promise<ServiceContext>) {
  return async function handle(): Promise<Omit<ReconcileReport, 'missing'> & { missing: number; firstMissing: string[] }> {
    const ctx = await context();
    const firstMissing: string[] = [];
    let missing = 0;
    const report = await reconcile(ctx, {
      onMissing: (path) => {
        missing += 1;
        if (firstMissing.length < LISTED) firstMissing.push(path);
        ctx.log.warn({ file_path: path }, 'record without an object');
      },
    });
    ctx.log.info({ indexed: report.indexed, refused: report.refused, deferred: report.deferred, skipped: report.skipped, missing }, 'reconcile');
    return { indexed: report.indexed, refused: report.refused, deferred: report.deferred, skipped: report.skipped, refusedLinks: report.refusedLinks, missing, firstMissing };
  };
}

/** The Lambda entry point: `dist/lambda/reconcile-handler.handler`. */
export const handler = makeReconcileHandler(cachedContext(() => contextFromEnvironment()));
