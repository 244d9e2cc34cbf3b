/**
 * Runs `work` on each item with at most `jobs` running at once. Items are pulled from
 * the source only when a worker is free, so a long source (a spooled query) is never
 * read ahead into memory. `work` reports its own failures; a throw here is a bug. Once
 * `stopped` says so, no further item is taken; the number left untaken is returned.
 */
export async function runPool<T>(
  items: AsyncIterable<T> | Iterable<T>,
  jobs: number,
  work: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<number> {
  const running = new Set<Promise<void>>();
  let left = 0;
  for await (const item of items) {
    if (stopped()) {
      left++;
      continue;
    }
    const task: Promise<void> = work(item).finally(() => running.delete(task));
    running.add(task);
    if (running.size >= jobs) await Promise.race(running);
  }
  await Promise.all(running);
  return left;
}
