import { isIPv6 } from 'node:net';

/**
 * Who a feed is counted against: an IPv4 address, or an IPv6 client's /64 (one host holds a
 * whole /64, and can pick any address in it), an IPv4-mapped address as its IPv4 one.
 */
export function feedSource(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/** What admitting a feed decided: opened, opened by ending another source's oldest feed, or refused. */
export type Admission<T> = { readonly kind: 'open'; readonly evicted?: T } | { readonly kind: 'too-many' } | { readonly kind: 'full' };

/**
 * The live feed's slots (docs/trust.md "Limits"): at most `perSource` feeds per source
 * (feedSource) and `total` in all. When every slot is taken, a newcomer is not locked out: the
 * source holding the most feeds gives up its oldest, as long as it holds at least two more than
 * the newcomer (its client resumes with Last-Event-ID and loses nothing). Only when the slots
 * are shared about evenly is the instance full (503).
 */
export class FeedSlots<T> {
  private readonly bySource = new Map<string, T[]>();
  private count = 0;

  constructor(
    readonly total: number,
    readonly perSource: number,
  ) {}

  get size(): number {
    return this.count;
  }

  /** Takes a slot for `feed` from `source`, or says why not; `evicted`, when present, must be ended by the caller. */
  admit(source: string, feed: T): Admission<T> {
    const mine = this.bySource.get(source) ?? [];
    if (mine.length >= this.perSource) return { kind: 'too-many' };
    let evicted: T | undefined;
    if (this.count >= this.total) {
      let largest: T[] | undefined;
      for (const feeds of this.bySource.values()) if (!largest || feeds.length > largest.length) largest = feeds;
      if (!largest || largest.length < mine.length + 2) return { kind: 'full' };
      evicted = largest[0];
      this.release(this.sourceOf(largest), evicted!);
    }
    mine.push(feed);
    this.bySource.set(source, mine);
    this.count++;
    return evicted === undefined ? { kind: 'open' } : { kind: 'open', evicted };
  }

  /** Gives a feed's slot back (once; a second call for the same feed does nothing). */
  release(source: string, feed: T): void {
    const feeds = this.bySource.get(source);
    const at = feeds?.indexOf(feed) ?? -1;
    if (!feeds || at < 0) return;
    feeds.splice(at, 1);
    this.count--;
    if (feeds.length === 0) this.bySource.delete(source);
  }

  /** Feeds held by each source (for tests and metrics). */
  holdings(): Map<string, number> {
    return new Map([...this.bySource].map(([source, feeds]) => [source, feeds.length]));
  }

  private sourceOf(feeds: T[]): string {
    for (const [source, held] of this.bySource) if (held === feeds) return source;
    return '';
  }
}
