import { Gauge, type Registry } from 'prom-client';
import type { Catalog } from '../catalog/index.js';
import type { ServiceContext } from '../service/index.js';
import { checkDependencies, withinCheckTime } from './dependency-checks.js';

/** How often a scrape may count the catalog's records anew; between, the last count is answered. */
export const CATALOG_COUNT_EVERY_MS = 60_000;

/**
 * How long one check of the dependencies stands: scrapes within it answer its result instead of
 * pinging the catalog and the store again (several Prometheus servers, or a dashboard, scrape
 * every instance). Short, so that an outage shows within a scrape interval or two.
 */
export const DEPENDENCIES_EVERY_MS = 5_000;

/**
 * The gauges of `GET /metrics` read from the catalog and the store when scraped: the catalog's
 * size, whether each dependency answers, and the fixity audits' state. Each is cached for a
 * while, so that many scrapers cost the backends little.
 */
export function registerBackendGauges(registry: Registry, ctx: ServiceContext): void {
  const counted = { at: -Infinity, files: 0 };
  let checked: { at: number; results: ReturnType<typeof checkDependencies> } = { at: -Infinity, results: Promise.resolve({ catalog: 'ok', store: 'ok' }) };

  // A scrape always answers, most of all while a dependency is down: what cannot be read is
  // left out (the catalog's size) and said in sdc_dependency_up, never a failed scrape.
  new Gauge({
    name: 'sdc_catalog_files',
    help: 'Records in the catalog (absent while the catalog does not answer)',
    registers: [registry],
    // Counting the whole catalog costs work proportional to the archive: at most once a
    // CATALOG_COUNT_EVERY_MS, however often /metrics is scraped (docs/trust.md "Rate limit").
    async collect() {
      // Between counts the last count stands; while the catalog does not answer, it is left out.
      try {
        if (Date.now() - counted.at >= CATALOG_COUNT_EVERY_MS) {
          counted.files = await withinCheckTime(() => ctx.catalog.count({}));
          counted.at = Date.now();
        }
        this.set(counted.files);
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_dependency_up',
    help: `Whether the catalog and the object store answered their last check (1) or not (0), checked at most every ${DEPENDENCIES_EVERY_MS / 1000} s`,
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      // Scrapes at once, or within DEPENDENCIES_EVERY_MS of a check, share that check.
      if (Date.now() - checked.at >= DEPENDENCIES_EVERY_MS) checked = { at: Date.now(), results: checkDependencies(ctx) };
      const results = await checked.results;
      this.set({ dependency: 'catalog' }, results.catalog === 'ok' ? 1 : 0);
      this.set({ dependency: 'store' }, results.store === 'ok' ? 1 : 0);
    },
  });
  // Fixity audits (docs/deploy.md "Fixity audits"): what the catalog's records say, read from
  // the indexes (Catalog.fixityStatus: a few index probes), at most every DEPENDENCIES_EVERY_MS;
  // the count of verified files costs as much as the catalog's size, so it is cached as long.
  // Files and bytes read by a run are in that run's summary and log: the server runs no audit.
  let fixity: { at: number; status: ReturnType<Catalog['fixityStatus']> } | undefined;
  const fixityStatus = () => {
    if (fixity === undefined || Date.now() - fixity.at >= DEPENDENCIES_EVERY_MS) {
      fixity = { at: Date.now(), status: withinCheckTime(() => ctx.catalog.fixityStatus()) };
      fixity.status.catch(() => {});
    }
    return fixity.status;
  };
  new Gauge({
    name: 'sdc_fixity_failed_files',
    help: 'Files whose last fixity audit found their stored bytes changed (mismatch) or gone (missing); never served until restored',
    labelNames: ['fixity'],
    registers: [registry],
    async collect() {
      try {
        const status = await fixityStatus();
        this.set({ fixity: 'mismatch' }, status.mismatch);
        this.set({ fixity: 'missing' }, status.missing);
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_fixity_oldest_verification_age_seconds',
    help: 'Age of the oldest fixity verification of any file (absent until a file is verified; see sdc_fixity_never_verified)',
    registers: [registry],
    async collect() {
      try {
        const { oldestVerified } = await fixityStatus();
        if (oldestVerified === undefined) this.reset();
        else this.set(Math.max(0, (Date.now() - Date.parse(oldestVerified)) / 1000));
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'sdc_fixity_never_verified',
    help: 'Whether some file has never been verified by a fixity audit (1) or none (0): the audit has not yet gone round once',
    registers: [registry],
    async collect() {
      try {
        this.set((await fixityStatus()).neverVerified ? 1 : 0);
      } catch {
        this.reset();
      }
    },
  });
  const verified = { at: -Infinity, files: 0 };
  new Gauge({
    name: 'sdc_fixity_verified_files',
    help: `Files verified at least once by a fixity audit, counted at most every ${CATALOG_COUNT_EVERY_MS / 1000} s (as sdc_catalog_files)`,
    registers: [registry],
    async collect() {
      try {
        if (Date.now() - verified.at >= CATALOG_COUNT_EVERY_MS) {
          verified.files = await withinCheckTime(() => ctx.catalog.countVerified());
          verified.at = Date.now();
        }
        this.set(verified.files);
      } catch {
        this.reset();
      }
    },
  });
}
