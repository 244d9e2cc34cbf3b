import { startBackgroundStep, type BackgroundStep } from './background-step.js';
import type { ServiceContext } from './service-context.js';

/** How often each instance looks for releases whose date has come (docs/api.md "Releases"). */
export const PUBLISH_INTERVAL_MS = 2000;

/**
 * The background step of every instance (docs/api.md "Who sees what"): a scheduled release or an
 * embargo that ends makes its files public by their date alone (the reads compare it with now);
 * this step logs each such file's 'released' change within seconds, so harvesters of the change
 * log learn of it. Safe on any number of instances at once (catalog.announceDue marks each file once).
 */
export function startReleasePublisher(ctx: ServiceContext, intervalMs = PUBLISH_INTERVAL_MS): BackgroundStep {
  return startBackgroundStep(
    async (stopped) => {
      try {
        let logged = 0;
        for (let n = await ctx.catalog.announceDue(); n > 0 && !stopped(); n = await ctx.catalog.announceDue()) logged += n;
        if (logged > 0) ctx.log.info({ released: logged }, 'logged files whose release date has come');
      } catch (err) {
        ctx.log.warn({ err }, 'release step failed; it runs again shortly');
      }
    },
    { intervalMs },
  );
}
