// No Node import here: the portal bundles this module (web/build.js).

/** Longest total wait on "come back later" answers for one request or operation, ms (default 15 minutes). */
export const DEFAULT_MAX_BUSY_WAIT_MS = 15 * 60_000;

/** `Retry-After` in ms: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
