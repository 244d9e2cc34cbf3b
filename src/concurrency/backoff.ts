/**
 * The one backoff of the project: the SDK's retries and live feed, the portal's parts, the
 * server's waits for a name lease or a contended S3 write.
 */
export interface Backoff {
  /** Ceiling of the first wait; doubles each attempt. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * Half of each wait random (default), so clients failing together do not return together;
   * false for a fixed wait (a process waiting on itself has nobody to spread from).
   */
  readonly jitter?: boolean;
}

/** The wait before retry `n + 1` (n from 0): doubling from the base up to the ceiling. */
export function backoffDelay(policy: Backoff, n: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
  if (policy.jitter === false) return ceiling;
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** Resolves after `ms` (rejects with the signal's reason if it aborts first); Node and browsers alike. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
