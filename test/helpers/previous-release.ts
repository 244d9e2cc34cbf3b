import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A release recorded in CHANGELOG.md: its version and the commit it was cut from. */
export interface RecordedRelease {
  readonly version: string;
  readonly commit: string;
}

/**
 * The newest earlier release CHANGELOG.md records ("## X.Y.Z" with "Cut from commit <sha>"):
 * what an upgrade starts from (docs/deploy.md "Upgrading without downtime").
 */
export function previousRelease(): RecordedRelease {
  const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  for (const section of changelog.split(/^## /m).slice(1)) {
    const version = /^(\d+\.\d+\.\d+)(?!.*unreleased)/.exec(section)?.[1];
    const commit = /Cut from commit ([0-9a-f]{40})/.exec(section)?.[1];
    if (version && commit) return { version, commit };
  }
  throw new Error('CHANGELOG.md records no earlier release with the commit it was cut from');
}

/** Why the previous release cannot be built from this clone (a shallow one lacks its commit), or undefined. */
export function whyNoPreviousRelease(release: RecordedRelease): string | undefined {
  const found = spawnSync('git', ['-C', ROOT, 'cat-file', '-e', `${release.commit}^{commit}`], { stdio: 'ignore' });
  if (found.status === 0) return undefined;
  return `this clone has no history of commit ${release.commit.slice(0, 7)} (release ${release.version}; a shallow clone?): git fetch --unshallow, then run the upgrade tests again`;
}

/** Where built releases are kept between runs, as .ci/run keeps its builds. */
function cacheDir(): string {
  return process.env.SDC_CI_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'sdc-ci');
}

/**
 * The previous release built from its commit: a git worktree of it, its own dependencies
 * (main's node_modules linked when its package-lock.json is the same, else `npm ci
 * --ignore-scripts` with this checkout's better-sqlite3 binding, the same version), compiled;
 * kept under ~/.cache/sdc-ci so later runs start at once. Answers its `sdc` entry point.
 */
export async function buildPreviousRelease(release: RecordedRelease): Promise<string> {
  const home = join(cacheDir(), `release-${release.version}-${release.commit}`);
  const main = join(home, 'dist', 'cli', 'main.js');
  if (existsSync(main)) return main;
  await mkdir(cacheDir(), { recursive: true });
  const work = `${home}.work-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await run('git', ['-C', ROOT, 'worktree', 'prune']);
  await run('git', ['-C', ROOT, 'worktree', 'add', '--detach', work, release.commit]);
  try {
    const sameLock = spawnSync('git', ['-C', ROOT, 'diff', '--quiet', release.commit, '--', 'package-lock.json']).status === 0;
    if (sameLock) await run('cp', ['-al', join(ROOT, 'node_modules'), join(work, 'node_modules')]);
    else {
      await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: work, maxBuffer: 64 << 20 });
      await linkBinding(work);
    }
    await run(process.execPath, [join(work, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: work });
    await run(process.execPath, [join(work, 'web', 'build.js')], { cwd: work });
    // The build leaves the worktree (git forgets it) and becomes the cache entry in one rename.
    const built = `${home}.built-${process.pid}`;
    await mkdir(built, { recursive: true });
    for (const part of ['dist', 'node_modules', 'package.json', 'web']) await rename(join(work, part), join(built, part));
    await rm(home, { recursive: true, force: true });
    await rename(built, home);
  } finally {
    await run('git', ['-C', ROOT, 'worktree', 'remove', '--force', work]).catch(() => rm(work, { recursive: true, force: true }));
  }
  return main;
}

/** better-sqlite3's compiled binding (skipped by --ignore-scripts), from this checkout when the versions match. */
async function linkBinding(work: string): Promise<void> {
  const versionOf = (dir: string) => (JSON.parse(readFileSync(join(dir, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string }).version;
  if (versionOf(work) !== versionOf(ROOT)) {
    await run('npm', ['rebuild', 'better-sqlite3'], { cwd: work, maxBuffer: 64 << 20 });
    return;
  }
  const release = join('node_modules', 'better-sqlite3', 'build', 'Release');
  await mkdir(join(work, release), { recursive: true });
  await copyFile(join(ROOT, release, 'better_sqlite3.node'), join(work, release, 'better_sqlite3.node'));
}
