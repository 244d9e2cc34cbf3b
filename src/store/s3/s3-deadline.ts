import type { S3Client } from '@aws-sdk/client-s3';
import { callSignalOf, takesCallSignals, withCallSignal } from './s3-call-signals.js';

/**
 * The store's calls that answer with a few headers or one page, and that a request waits for
 * (an upload address's HEAD, a listing page, a part list, opening or ending an upload in parts):
 * each gets `operationTimeoutMs` in all, its retries included. Calls that move bytes (GET,
 * PUT, a copy, joining the parts) keep the long per-request timeout alone
 * (docs/deploy.md, `SDC_STORE` parameters). By the name the SDK gives the command
 * (`context.commandName`, a literal in its code: a minified bundle renames the classes).
 */
const SHORT_CALLS: ReadonlySet<string> = new Set([
  'HeadObjectCommand',
  'HeadBucketCommand',
  'ListObjectsV2Command',
  'ListPartsCommand',
  'CreateMultipartUploadCommand',
  'AbortMultipartUploadCommand',
  'DeleteObjectCommand',
]);

/** A short call that ran out of its deadline; reported as the SDK reports a store that does not answer (503 SDC_STORE_UNAVAILABLE). */
export class StoreDeadlineError extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'ETIMEDOUT';
  /** Marks it as the store's, as the SDK's own errors are (errors/unavailable.ts). */
  readonly $metadata = {};
  constructor(operation: string, ms: number) {
    super(`the object store did not answer ${operation} within ${ms} ms`);
  }
}

/**
 * Makes every short call `client` sends (its paginators' pages included) end after `ms` with a
 * StoreDeadlineError, its connection aborted: a store that accepts connections and never answers
 * (frozen, black-holed) then costs a request `ms`, not the SDK's retries of the long timeout.
 * A middleware added once, whose signal reaches the HTTP requests as a call signal
 * (s3-call-signals.ts), so each call is sent without options and the client's cached handler
 * serves it (docs/performance.md, "AWS SDK per request"). A call given its own signal keeps it alone.
 */
export function limitShortCalls(client: S3Client, ms: number): void {
  if (!takesCallSignals(client)) throw new Error('limitShortCalls needs a client with call signals (installCallSignals)');
  client.middlewareStack.add(
    (next, context) => {
      // Once per command class: the handler is cached.
      const operation = context.commandName?.replace(/Command$/, '') ?? 'a call';
      if (!SHORT_CALLS.has(context.commandName ?? '')) return next;
      return async (args) => {
        if (callSignalOf(args)) return next(args);
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new StoreDeadlineError(operation, ms)), ms);
        // Also ends the call while the SDK's retry waits between attempts (its next attempt then
        // finds the signal aborted and sends nothing).
        const expired = new Promise<never>((_resolve, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true }));
        try {
          return await Promise.race([next(withCallSignal(args, controller.signal)), expired]);
        } catch (err) {
          throw controller.signal.aborted ? (controller.signal.reason as StoreDeadlineError) : err;
        } finally {
          clearTimeout(timer);
        }
      };
    },
    { step: 'initialize', priority: 'high', name: 'sdcShortCallDeadline' },
  );
}
