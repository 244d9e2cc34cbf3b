import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slow groups: Chromium, podman and the AWS bundle, faults across processes, minutes of load,
 * the upgrade from the previous release (built from its commit on a first run).
 * `npm test` leaves these folders out (vitest.fast.config.ts); `npm run test:all` starts them first.
 */
export const SLOW_FOLDERS = ['test/deploy/', 'test/faults/', 'test/browser/', 'test/reliability/', 'test/upgrade/'];

/**
 * What `npm run test:all` starts first, longest first: the container image (an image build, minutes),
 * then the slow folders. Started last they would run after everything else on one worker, each
 * alone; started first they run beside the many short files (test/README.md, "How long").
 */
export const START_FIRST = ['test/deploy/container-image.test.ts', ...SLOW_FOLDERS];

function rank(spec: TestSpecification): number {
  const path = relative(spec.project.config.root, spec.moduleId).split('\\').join('/');
  const index = START_FIRST.findIndex((start) => (start.endsWith('/') ? path.startsWith(start) : path === start));
  return index === -1 ? START_FIRST.length : index;
}

/**
 * vitest's order (the last run's longest and failed files first; on a fresh clone, the largest)
 * with START_FIRST before the rest, so a fresh clone, as CI has, starts the slow groups first too.
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const ranks = new Map(sorted.map((spec) => [spec, rank(spec)]));
    // Array.prototype.sort is stable: within a rank, vitest's order stays.
    return sorted.sort((a, b) => ranks.get(a)! - ranks.get(b)!);
  }
}
