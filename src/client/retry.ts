// No Node import here: the portal bundles this module (web/build.js).
import { backoffDelay, sleep } from '../concurrency/backoff.js';
import { BusyError, ClientError } from './client-errors.js';
import { DEFAULT_MAX_BUSY_WAIT_MS } from './retry-after.js';

export interface RetryPolicy {
  /** Further attempts after the first. */
  readonly retries: number;
  /** Ceiling of the first wait; doubles each attempt. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * Longest total wait, ms, on answers asking to come back later (429, 503 with
   * Retry-After): such waits are not failed attempts (request-pacing.ts).
   */
  readonly maxBusyWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ retries: 4, baseDelayMs: 500, maxDelayMs: 15_000, maxBusyWaitMs: DEFAULT_MAX_BUSY_WAIT_MS });

/** Told before each wait, e.g. to show "retrying in 1.2 s". */
export type RetryListener = (error: ClientError, attempt: number, delayMs: number) => void;

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable (a 4xx,
 * a naming error, a local problem), or the retries are spent. Waits double each time
 * and are jittered (half fixed, half random), so clients failing together do not return together.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  attempt: (attemptNumber: number) => Promise<T>,
  onRetry?: RetryListener,
): Promise<T> {
  let busyWaited = 0;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      // "Come back later": the shared pacer holds the next attempt back; not a failed attempt.
      if (err instanceof BusyError && (busyWaited += err.waitMs) <= policy.maxBusyWaitMs) {
        n--;
        continue;
      }
      if (!(err instanceof ClientError) || !err.retryable || n >= policy.retries) throw err;
      const delay = backoffDelay(policy, n);
      onRetry?.(err, n + 1, delay);
      await sleep(delay);
    }
  }
}
