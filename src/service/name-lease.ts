import { randomBytes } from 'node:crypto';
import { backoffDelay, sleep } from '../concurrency/backoff.js';
import type { WriteGuard } from '../store/index.js';
import type { ServiceContext } from './service-context.js';

/** A guard that never holds the name: a promotion given it only refuses (the name is taken) or stops, never writes. */
export const NOT_HELD: WriteGuard = { stillHeld: () => Promise.resolve(false) };

/**
 * How long a lease on a name lasts unless renewed: a promoter that crashed holds its name at most
 * this long, so an upload it was promoting waits at most this long for the sweep (issue: findable
 * within 15 s of a fault). Renewed every third of it while the write goes on.
 */
export const LEASE_TTL_MS = 10_000;
/** How often a promoter renews its lease while it writes. */
const RENEW_EVERY_MS = LEASE_TTL_MS / 3;
/**
 * How long a promotion started by a notification or a request waits for a name another
 * promotion holds, before leaving its upload for a later try (the next request for the name,
 * notification or reconcile): a notification answered late would hold up the client's PUT.
 */
export const SHORT_LEASE_WAIT_MS = 5_000;
/** How long a completion of an upload in parts, or reconcile, waits: past any lease a crashed promoter left. */
export const LONG_LEASE_WAIT_MS = LEASE_TTL_MS + 5_000;

/** Waits between attempts at a held lease: 50 ms doubling to 500 ms. */
const LEASE_BACKOFF = { baseDelayMs: 50, maxDelayMs: 500, jitter: false } as const;

export type UnderLease<T, S = never> =
  | { readonly held: true; readonly value: T }
  | { readonly held: false; readonly settled?: S };

/**
 * Runs `work` holding the catalog's lease on `key` (docs/deploy.md, *Files larger than one
 * PUT*): every write of a name into the object store by a promotion happens inside, so two
 * promotions of one name never write it at once, whatever the store honours. Waits up to
 * `waitMs` for a lease held by another (retrying with a short backoff; an expired one is taken
 * over), renews it while `work` runs, and releases it after. `work` gets a guard that renews
 * and tells whether the lease is still held (a write that took too long may have lost it).
 * `{ held: false }` when the lease could not be had in time: nothing was done.
 *
 * `settle`, asked after each attempt that finds the lease held, may end the wait without it
 * (`{ held: false, settled }`): e.g. the name got stored meanwhile, so this promotion has lost
 * and need not write anything, which needs no lease.
 */
export async function underNameLease<T, S = never>(
  ctx: ServiceContext,
  key: string,
  waitMs: number,
  work: (guard: WriteGuard) => Promise<T>,
  settle?: () => Promise<S | undefined>,
): Promise<UnderLease<T, S>> {
  const leases = ctx.catalog.leases();
  const holder = randomBytes(12).toString('hex');
  const deadline = Date.now() + waitMs;
  // A lease is lost only by expiring (nobody takes over a running one), so for a third of its
  // time after an acquire or renewal was sent, it is still held without asking the catalog.
  let sent = Date.now();
  for (let attempt = 0; !(await leases.acquire(key, holder, LEASE_TTL_MS)); attempt++, sent = Date.now()) {
    const settled = settle && (await settle());
    if (settled !== undefined) return { held: false, settled };
    if (Date.now() >= deadline) return { held: false };
    await sleep(Math.min(backoffDelay(LEASE_BACKOFF, attempt), Math.max(deadline - Date.now(), 10)));
  }
  let lost = false;
  let freshUntil = sent + RENEW_EVERY_MS;
  const renew = async (): Promise<boolean> => {
    const at = Date.now();
    if (!lost && !(await leases.renew(key, holder, LEASE_TTL_MS))) lost = true;
    if (!lost) freshUntil = at + RENEW_EVERY_MS;
    return !lost;
  };
  const stillHeld = (): Promise<boolean> => (!lost && Date.now() < freshUntil ? Promise.resolve(true) : renew());
  const timer = setInterval(() => {
    renew().catch((err: unknown) => ctx.log.warn({ err, file_path: key }, 'could not renew the lease on a name being written'));
  }, RENEW_EVERY_MS);
  timer.unref();
  try {
    return { held: true, value: await work({ stillHeld, renewedNow: renew }) };
  } finally {
    clearInterval(timer);
    await leases.release(key, holder).catch((err: unknown) => ctx.log.warn({ err, file_path: key }, 'could not release the lease on a name; it expires by itself'));
  }
}
