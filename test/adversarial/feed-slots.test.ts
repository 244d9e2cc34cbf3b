import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FeedSlots, feedSource } from '../../src/http/feed-slots.js';
import { MAX_FEEDS_PER_ADDRESS } from '../../src/http/feed-route.js';
import { scale } from '../reliability/figures.js';

const GENERATED_RUNS = scale(200, 2000);
const TOTAL = 64;

/** Client addresses: a few IPv4 hosts, IPv6 hosts spread over a few /64s, IPv4-mapped ones. */
const address = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((n) => `10.0.0.${n}`),
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 0xffff }), fc.integer({ min: 1, max: 0xffff })).map(([net, a, b]) => `2001:db8:0:${net}:${a.toString(16)}::${b.toString(16)}`),
  fc.integer({ min: 1, max: 40 }).map((n) => `::ffff:10.0.0.${n}`),
);

describe('the live feed keeps room for newcomers', () => {
  it('an IPv6 client counts per /64, an IPv4-mapped one as its IPv4 address', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffff }), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }), (net, host) => {
        const a = `2001:db8:${net.toString(16)}:1:${host.map((h) => h.toString(16)).join(':')}`;
        expect(feedSource(a)).toBe(`2001:db8:${net.toString(16)}:1::/64`);
        expect(feedSource(`2001:0db8:${net.toString(16).padStart(4, '0')}:0001::1`)).toBe(feedSource(a));
      }),
    );
    expect(feedSource('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(feedSource('::1')).toBe('0:0:0:0::/64');
  });

  it('whatever opens and closes: no source past its share, the total never past the cap, and a source holding less than the largest by two is always let in', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), address), { minLength: 1, maxLength: 400 }), (steps) => {
        const slots = new FeedSlots<number>(TOTAL, MAX_FEEDS_PER_ADDRESS);
        const live = new Map<number, string>();
        let id = 0;
        for (const [opens, ip] of steps) {
          const source = feedSource(ip);
          if (!opens && live.size > 0) {
            const [feed, from] = [...live][id % live.size]!;
            slots.release(from, feed);
            live.delete(feed);
            continue;
          }
          const held = slots.holdings();
          const mine = held.get(source) ?? 0;
          const largest = Math.max(0, ...held.values());
          const feed = id++;
          const answer = slots.admit(source, feed);
          if (answer.kind === 'open') {
            live.set(feed, source);
            if (answer.evicted !== undefined) live.delete(answer.evicted);
          }
          if (mine >= MAX_FEEDS_PER_ADDRESS) expect(answer.kind).toBe('too-many');
          else if (largest >= mine + 2 || slots.size < TOTAL) expect(answer.kind).toBe('open');
          expect(slots.size).toBeLessThanOrEqual(TOTAL);
          expect(slots.size).toBe(live.size);
          for (const n of slots.holdings().values()) expect(n).toBeLessThanOrEqual(MAX_FEEDS_PER_ADDRESS);
        }
      }),
      { numRuns: GENERATED_RUNS },
    );
  });

  it('64 sources × 8 feeds fill 512 slots, and a newcomer still gets one (the largest holder gives up its oldest)', () => {
    const slots = new FeedSlots<string>(512, MAX_FEEDS_PER_ADDRESS);
    for (let s = 0; s < 64; s++) for (let f = 0; f < 8; f++) expect(slots.admit(`10.0.1.${s}`, `${s}/${f}`).kind).toBe('open');
    const answer = slots.admit('192.0.2.1', 'newcomer');
    expect(answer).toEqual({ kind: 'open', evicted: '0/0' });
    expect(slots.size).toBe(512);
  });
});
