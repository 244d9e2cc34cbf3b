import { audit, type AuditFailure, type AuditReport, type ServiceContext } from '../service/index.js';
import { cachedContext, contextFromEnvironment } from './lambda-context.js';

/** Failures named in the function's answer (the log has every one). */
const LISTED = 100;

/**
 * Time kept back from the function's own (context.getRemainingTimeInMillis): the run stops
 * this long before the function would be killed, so it records what it found and answers.
 * A file cut short is left unrecorded; the next run starts with it.
 */
export const AUDIT_TIME_MARGIN_MS = 30_000;

/** What the schedule's event may say (EventBridge Scheduler's input): a rate and a prefix, as `sdc audit` takes. */
export interface AuditEvent {
  readonly rateMBps?: number;
  readonly path?: string;
}

/** The part of the Lambda context the handler reads. */
export interface AuditLambdaContext {
  getRemainingTimeInMillis(): number;
}

export type AuditAnswer = AuditReport & { readonly failures: readonly AuditFailure[] };

/**
 * `sdc audit` as a Lambda function run on a schedule (docs/deploy.md "Fixity audits"): each
 * invocation reads for as long as the function has (less AUDIT_TIME_MARGIN_MS), and the next
 * goes on where it stopped. A damaged or missing file makes the run fail (an error, so the
 * stack's alarm on the function's errors fires) after every file due was checked and recorded.
 */
export function makeAuditHandler(context: () => Promise<ServiceContext>) {
  return async function handle(event: AuditEvent | undefined, lambda: AuditLambdaContext): Promise<AuditAnswer> {
    const ctx = await context();
    const failures: AuditFailure[] = [];
    const report = await audit(ctx, {
      prefix: event?.path,
      bytesPerSecond: event?.rateMBps === undefined ? undefined : event.rateMBps * 1_000_000,
      maxDurationMs: Math.max(0, lambda.getRemainingTimeInMillis() - AUDIT_TIME_MARGIN_MS),
      onFailure: (failure) => {
        if (failures.length < LISTED) failures.push(failure);
      },
    });
    ctx.log.info({ ...report }, 'audit');
    if (report.mismatched + report.missing > 0) {
      const names = failures.map((f) => `${f.fixity}: ${f.path}`).join('; ');
      throw new Error(`audit: checked ${report.checked}, ok ${report.ok}, mismatched ${report.mismatched}, missing ${report.missing}: ${names}`);
    }
    return { ...report, failures };
  };
}

/** The Lambda entry point: `dist/lambda/audit-handler.handler`. */
export const handler = makeAuditHandler(cachedContext(() => contextFromEnvironment()));
