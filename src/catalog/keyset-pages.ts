/** Rows read per round trip when walking a query: bounds memory, whatever the match count. */
export const QUERY_PAGE_SIZE = 1000;

/**
 * THE keyset-paging loop of every catalog walk (query pages, their JSON form, reconcile's
 * paths, coverage days): each round trip asks for the next page after the last item seen, so
 * no connection or cursor is held between pages and memory stays flat however many match.
 * `read` answers up to `size` items after `after` (from the start when undefined); `position`
 * says where the next page starts. Stops after `limit` items or at the first short page.
 */
export async function* keysetPages<T, P>(
  read: (after: P | undefined, size: number) => Promise<readonly T[]> | readonly T[],
  position: (last: T) => P,
  from: P | undefined = undefined,
  limit = Infinity,
  pageSize = QUERY_PAGE_SIZE,
): AsyncIterable<readonly T[]> {
  let after = from;
  let remaining = limit;
  while (remaining > 0) {
    const size = Math.min(pageSize, remaining);
    const items = await read(after, size);
    if (items.length > 0) yield items;
    if (items.length < size) return;
    remaining -= items.length;
    after = position(items[items.length - 1]!);
  }
}
