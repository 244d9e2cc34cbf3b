/**
 * The one worker pool of the project (server, SDK, CLI and portal): runs `work` on each item
 * with at most `jobs` running at once. Items are pulled from the source only when a worker is
 * free, so a long source (a spooled query, a store listing) is never read ahead into memory.
 * Once `stopped` says so, no further item is taken; the number left untaken is returned.
 * The first failure of `work` stops the taking of items; the ones running are awaited (none
 * is left as a rejected promise nobody awaits) and that failure is thrown.
 */
export async function runPool<T>(
  items: AsyncIterable<T> | Iterable<T>,
  jobs: number,
  work: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<number> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let left = 0;
  try {
    for await (const item of items) {
      if (stopped()) {
        left++;
        continue;
      }
      const task: Promise<void> = Promise.resolve()
        .then(() => work(item))
        .catch((error: unknown) => void (failure ??= { error }))
        .finally(() => running.delete(task));
      running.add(task);
      if (running.size >= Math.max(1, jobs)) await Promise.race(running);
      if (failure) break;
    }
  } finally {
    await Promise.all(running);
  }
  if (failure) throw failure.error;
  return left;
}
