import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../src/concurrency/backoff.js';
import { runPool } from '../../../src/concurrency/run-pool.js';

/** A promise and the function that settles it, so a test decides when work ends. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('runPool', () => {
  it('runs at most `jobs` at once and takes each item once', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await runPool([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(n);
      running--;
    });
    expect(most).toBe(3);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('counts the items left once stopped', async () => {
    let done = 0;
    const left = await runPool([1, 2, 3, 4, 5], 1, async () => void done++, () => done >= 2);
    expect([done, left]).toEqual([2, 3]);
  });

  it('stops taking items at the first failure, awaits the ones running, then throws it', async () => {
    const slow = gate();
    const started: number[] = [];
    let slowFinished = false;
    const run = runPool([1, 2, 3, 4], 2, async (n) => {
      started.push(n);
      if (n === 1) {
        await slow.opened;
        slowFinished = true;
      }
      if (n === 2) throw new Error('part 2 failed');
    });
    let settled = false;
    void run.catch(() => undefined).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    slow.open();
    await expect(run).rejects.toThrow('part 2 failed');
    expect(slowFinished).toBe(true);
    expect(started).toEqual([1, 2]);
  });

  it('reads an async source only as workers free up', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 10; i++) {
        pulled++;
        yield i;
      }
    }
    const first = gate();
    const run = runPool(source(), 2, async (n) => {
      if (n < 2) await first.opened;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(pulled).toBe(2);
    first.open();
    expect(await run).toBe(0);
    expect(pulled).toBe(10);
  });
});

describe('backoffDelay', () => {
  it('doubles from the base up to the ceiling; jitter keeps half of each wait', () => {
    const fixed = { baseDelayMs: 50, maxDelayMs: 500, jitter: false };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(fixed, n))).toEqual([50, 100, 200, 400, 500, 500]);
    for (let n = 0; n < 6; n++) {
      const wait = backoffDelay({ baseDelayMs: 500, maxDelayMs: 15_000 }, n);
      const ceiling = Math.min(15_000, 500 * 2 ** n);
      expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
      expect(wait).toBeLessThanOrEqual(ceiling);
    }
  });
});
