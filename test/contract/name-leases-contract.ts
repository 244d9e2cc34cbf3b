import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NameLeases } from '../../src/catalog/index.js';
import type { CatalogUnderTest } from './catalog-under-test.js';

/**
 * A lease on a path of its own, taken just after the one under test with the same lifetime, that
 * resolves once it can be taken over: by the database's clock (the one leases are read by), the
 * lease under test has expired too. Awaits that clock instead of sleeping past it.
 */
async function expiryMark(leases: NameLeases, path: string, ttlMs: number): Promise<() => Promise<void>> {
  const mark = `${path}.expiry-mark`;
  expect(await leases.acquire(mark, 'mark', ttlMs)).toBe(true);
  return async () => {
    await vi.waitFor(async () => expect(await leases.acquire(mark, 'watcher', 60_000)).toBe(true), { timeout: 10_000, interval: 25 });
    await leases.release(mark, 'watcher');
  };
}

/**
 * The NameLeases port's contract, run on the leases of every catalog adapter (they live beside
 * the records): one holder at a time, whoever races; an expired lease can be taken over; only
 * its holder renews or releases it.
 */
export function describeNameLeases(name: string, make: () => Promise<CatalogUnderTest>): void {
  describe(`name leases contract: ${name}`, () => {
    let subject: CatalogUnderTest;
    let leases: NameLeases;
    beforeAll(async () => {
      subject = await make();
      leases = subject.catalog.leases();
    });
    afterAll(async () => {
      await subject?.dispose();
    });

    it('gives a free name to exactly one of many racing acquirers, then to nobody else until released', async () => {
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
      const holders = Array.from({ length: 16 }, (_, i) => `holder-${i}`);
      const won = await Promise.all(holders.map((h) => leases.acquire(path, h, 60_000)));
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = holders[won.indexOf(true)]!;
      const others = holders.filter((h) => h !== winner);
      expect(await Promise.all(others.map((h) => leases.acquire(path, h, 60_000)))).toEqual(others.map(() => false));
      // The holder acquiring again keeps (and extends) its own lease.
      expect(await leases.acquire(path, winner, 60_000)).toBe(true);
      await leases.release(path, winner);
      expect(await leases.acquire(path, others[0]!, 60_000)).toBe(true);
      await leases.release(path, others[0]!);
    });

    it('lets another acquirer take over an expired lease, and the former holder can no longer renew it', async () => {
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
      expect(await leases.acquire(path, 'crashed', 150)).toBe(true);
      const expired = await expiryMark(leases, path, 150);
      expect(await leases.acquire(path, 'next', 60_000)).toBe(false);
      await expired();
      const racers = await Promise.all(['next', 'other', 'third'].map((h) => leases.acquire(path, h, 60_000)));
      expect(racers.filter(Boolean)).toHaveLength(1);
      expect(await leases.renew(path, 'crashed', 60_000)).toBe(false);
      await leases.release(path, 'crashed');
      const holder = ['next', 'other', 'third'][racers.indexOf(true)]!;
      expect(await leases.renew(path, holder, 60_000)).toBe(true);
      await leases.release(path, holder);
    });

    it('tells whether a name is held: while a lease runs, not once released or expired', async () => {
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240109_20240109_v00-01.cdf';
      expect(await leases.held(path)).toBe(false);
      expect(await leases.acquire(path, 'writer', 60_000)).toBe(true);
      expect(await leases.held(path)).toBe(true);
      await leases.release(path, 'writer');
      expect(await leases.held(path)).toBe(false);
      expect(await leases.acquire(path, 'crashed', 150)).toBe(true);
      const expired = await expiryMark(leases, path, 150);
      await expired();
      expect(await leases.held(path)).toBe(false);
    });

    it('keeps a renewed lease past its first expiry', async () => {
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240107_20240107_v00-01.cdf';
      expect(await leases.acquire(path, 'slow', 300)).toBe(true);
      const firstExpiry = await expiryMark(leases, path, 300);
      expect(await leases.renew(path, 'slow', 60_000)).toBe(true);
      await firstExpiry();
      expect(await leases.acquire(path, 'eager', 60_000)).toBe(false);
      await leases.release(path, 'slow');
    });

    it('ignores a release or renewal by anyone but the holder', async () => {
      const path = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240108_20240108_v00-01.cdf';
      expect(await leases.acquire(path, 'owner', 60_000)).toBe(true);
      await leases.release(path, 'intruder');
      expect(await leases.renew(path, 'intruder', 60_000)).toBe(false);
      expect(await leases.acquire(path, 'intruder', 60_000)).toBe(false);
      expect(await leases.renew(path, 'owner', 60_000)).toBe(true);
      await leases.release(path, 'owner');
      expect(await leases.renew(path, 'owner', 60_000)).toBe(false);
      // Leases of other names are independent.
      expect(await leases.acquire(`${path}.other`, 'intruder', 60_000)).toBe(true);
      await leases.release(`${path}.other`, 'intruder');
    });
  });
}
