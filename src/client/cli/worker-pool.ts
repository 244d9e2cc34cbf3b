/**
 * Runs `work` on each item with at most `jobs` running at once. Items are pulled from
 * the source only when a worker is free, so a long source (a spooled query) is never
 * read ahead into memory. `work` reports its own failures; a throw here is a bug.
 */
export async function runPool<T>(
  items: AsyncIterable<T> | Iterable<T>,
  jobs: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  for await (const item of items) {
    const task: Promise<void> = work(item).finally(() => running.delete(task));
    running.add(task);
    if (running.size >= jobs) await Promise.race(running);
  }
  await Promise.all(running);
}
