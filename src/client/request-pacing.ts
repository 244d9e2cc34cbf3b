import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs } from './retry-after.js';

export { DEFAULT_MAX_BUSY_WAIT_MS, retryAfterMs } from './retry-after.js';

/** Retry-After beyond this is not believed (a broken header): one waits this long instead, ms. */
const LONGEST_ONE_WAIT_MS = 5 * 60_000;

/**
 * One pace for every request a client sends, shared by all its workers (`sdc ... --jobs 8`
 * runs eight uploads on one client, so on one pacer). When the service says to come back
 * later (429 or 503 with `Retry-After`), or says the budget of the current window is spent
 * (`X-RateLimit-Remaining: 0`, with `X-RateLimit-Reset`), every request waits until then
 * instead of each worker discovering the limit on its own and failing. See docs/client.md
 * ("Pacing") for the arithmetic of the service's limit.
 */
export class RequestPacer {
  private resumeAt = 0;

  constructor(
    /** Told once per new pause (not per waiting request), e.g. to print "paused 40 s". */
    private readonly onPause?: (waitMs: number, reason: string) => void,
  ) {}

  /** Resolves when requests may go out again (at once when nothing paused them). */
  async ready(signal?: AbortSignal): Promise<void> {
    for (let wait = this.resumeAt - Date.now(); wait > 0; wait = this.resumeAt - Date.now()) {
      await sleep(wait, undefined, { signal });
    }
  }

  /** Pauses every request for `waitMs` from now (a later pause already set is kept). */
  pause(waitMs: number, reason: string): void {
    const until = Date.now() + Math.min(Math.max(waitMs, 0), LONGEST_ONE_WAIT_MS);
    if (until <= this.resumeAt) return;
    // Told only when this pause goes past the one requests already wait for.
    if (until - Math.max(this.resumeAt, Date.now()) >= 1000) this.onPause?.(until - Date.now(), reason);
    this.resumeAt = until;
  }

  /**
   * Reads an answer's pacing headers: a spent budget pauses until its window ends, and a
   * 429 or 503 with Retry-After pauses for that long. Returns the wait an answer that asks
   * to come back later asked for, else undefined.
   */
  observe(status: number, headers: Record<string, string | string[] | undefined>): number | undefined {
    const retryAfter = status === 429 || status === 503 ? retryAfterMs(first(headers['retry-after'])) : undefined;
    if (retryAfter !== undefined) {
      this.pause(retryAfter, status === 429 ? 'the service asks to slow down (429)' : 'the service is busy (503)');
      return retryAfter;
    }
    // A 429 without Retry-After is still "too many": a short pause, then try again.
    if (status === 429) {
      this.pause(1000, 'the service asks to slow down (429)');
      return 1000;
    }
    if (first(headers['x-ratelimit-remaining']) === '0') {
      const reset = Number(first(headers['x-ratelimit-reset']));
      if (Number.isFinite(reset) && reset > 0) this.pause(reset * 1000, "the service's request budget for this minute is spent");
    }
    return undefined;
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
