import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The `sdc` command of a build (its dist/). */
export function sdcCli(dist: string, home: string, ...args: string[]): string {
  return execFileSync(process.execPath, [join(dist, 'cli/main.js'), ...args, '--home', home], { encoding: 'utf8' });
}

/**
 * A new SDC_HOME holding `count` synthetic records, seeded by the build in `dist` itself: each
 * build measured gets its own, since a build refuses a catalog a newer one migrated past it.
 * With `catalog` (a PostgreSQL URL with its own schema), the records go there instead.
 */
export function seededHome(dist: string, count: number, catalog?: string): string {
  const home = mkdtempSync(join(tmpdir(), 'sdc-bench-'));
  const where = catalog === undefined ? [] : ['--catalog', catalog];
  execFileSync(process.execPath, [join(dist, 'cli/main.js'), 'seed', '--count', String(count), ...where, '--home', home, '--create'], { stdio: 'inherit' });
  return home;
}
