import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The reliability tests run small in CI and large under `npm run reliability`
 * (SDC_RELIABILITY=full), which also collects the figures they measure into
 * SDC_FIGURES_DIR for docs/reliability.md.
 */
export const FULL = process.env.SDC_RELIABILITY === 'full';

/** `ci` in CI, `full` under `npm run reliability`. */
export function scale<T>(ci: T, full: T): T {
  return FULL ? full : ci;
}

/** Saves one test's figures (a flat object of numbers and strings) for the report. */
export function recordFigures(name: string, figures: Record<string, number | string>): void {
  const dir = process.env.SDC_FIGURES_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
}
