import type { ServiceContext } from '../service/index.js';

/** A check that has not answered by then counts as failed: a load balancer or a scrape must not wait on it. */
export const CHECK_TIMEOUT_MS = 2000;

export type CheckResult = 'ok' | 'unreachable';

/** Runs `work`, failing it after CHECK_TIMEOUT_MS (the work itself is left to finish or fail on its own). */
export async function withinCheckTime<T>(work: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the catalog and the store answer now; `onFailure` hears why one did not. */
export async function checkDependencies(
  ctx: ServiceContext,
  onFailure: (name: 'catalog' | 'store', err: unknown) => void = () => undefined,
): Promise<{ catalog: CheckResult; store: CheckResult }> {
  const probe = async (name: 'catalog' | 'store', ping: () => Promise<void>): Promise<CheckResult> => {
    try {
      await withinCheckTime(ping);
      return 'ok';
    } catch (err) {
      onFailure(name, err);
      return 'unreachable';
    }
  };
  const [catalog, store] = await Promise.all([probe('catalog', () => ctx.catalog.ping()), probe('store', () => ctx.store.ping())]);
  return { catalog, store };
}

/** Uploads the store acknowledged that are not indexed yet, as the last sweep saw them (service/ingest-sweep.ts). */
export function ingestBacklog(ctx: ServiceContext): { uploads: number; oldest_seconds: number } {
  const backlog = ctx.activity?.backlog;
  return { uploads: backlog?.count ?? 0, oldest_seconds: backlog?.oldestSeconds ?? 0 };
}
