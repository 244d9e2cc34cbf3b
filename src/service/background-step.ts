/** A step that every instance runs in the background (the ingest sweep, the release step). */
export interface BackgroundStep {
  /** Stops the timer and waits for a pass under way, at most `stopWaitMs`. */
  stop(): Promise<void>;
}

export interface BackgroundStepOptions {
  /** Time between the end of one pass and the start of the next; 0 or less: no repeats. */
  readonly intervalMs: number;
  /** Run the first pass at once (the start-up reconcile) rather than after one interval. */
  readonly runAtOnce?: boolean;
  /**
   * How long stop() waits for a pass under way; past it the pass is abandoned, so a pass
   * waiting out a lease never holds up a graceful close (every step's work is idempotent: the
   * next start redoes what one did not finish).
   */
  readonly stopWaitMs?: number;
}

/**
 * Runs `pass` again and again, each pass after the previous one ended (passes never overlap),
 * on a timer that keeps no process alive. A pass catches and logs its own failures: the next
 * one is the retry. `stopped()` tells a long pass to end early.
 */
export function startBackgroundStep(pass: (stopped: () => boolean) => Promise<void>, { intervalMs, runAtOnce = false, stopWaitMs = 2_000 }: BackgroundStepOptions): BackgroundStep {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const isStopped = () => stopped;
  const run = () => {
    running = pass(isStopped).finally(schedule);
  };
  const schedule = () => {
    if (stopped || intervalMs <= 0) return;
    timer = setTimeout(run, intervalMs);
    timer.unref();
  };
  if (runAtOnce) run();
  else schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([running.catch(() => undefined), new Promise((resolve) => (wait = setTimeout(resolve, stopWaitMs)))]);
      clearTimeout(wait);
    },
  };
}
