import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

/**
 * The store's calls that answer with a few headers or one page, and that a request waits for
 * (an upload address's HEAD, a listing page, a part list, opening or ending an upload in parts):
 * each gets `operationTimeoutMs` in all, its retries included. Calls that move bytes (GET,
 * PUT, a copy, joining the parts) keep the long per-request timeout alone
 * (docs/deploy.md, `SDC_STORE` parameters).
 */
const SHORT_CALLS: readonly (abstract new (...args: never[]) => unknown)[] = [
  HeadObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  CreateMultipartUploadCommand,
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
];

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

type Send = (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;

/**
 * Makes every short call `client` sends (its paginators' pages included) end after `ms` with a
 * StoreDeadlineError, its connection aborted: a store that accepts connections and never answers
 * (frozen, black-holed) then costs a request `ms`, not the SDK's retries of the long timeout.
 */
export function limitShortCalls(client: S3Client, ms: number): void {
  const send = client.send.bind(client) as Send;
  const limited: Send = async (command, options) => {
    if (options?.abortSignal || !SHORT_CALLS.some((kind) => command instanceof kind)) return send(command, options);
    const operation = (command as object).constructor.name.replace(/Command$/, '');
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new StoreDeadlineError(operation, ms)), ms);
    try {
      return await send(command, { ...options, abortSignal: controller.signal });
    } catch (err) {
      throw controller.signal.aborted ? (controller.signal.reason as StoreDeadlineError) : err;
    } finally {
      clearTimeout(timer);
    }
  };
  client.send = limited as S3Client['send'];
}
