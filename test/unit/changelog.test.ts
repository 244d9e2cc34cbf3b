import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SQLITE_DIALECT } from '../../src/catalog/catalog-dialect.js';
import { migrations } from '../../src/catalog/migrations.js';
import { runCli } from '../helpers/run-cli.js';

// CHANGELOG.md is what an upgrade starts from (docs/deploy.md): the newest release is the version
// sdc prints, every earlier one names the commit it was cut from, every migration has its release.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;

interface Release {
  readonly version: string;
  readonly text: string;
}

function releases(): Release[] {
  const changelog = readFileSync(`${ROOT}/CHANGELOG.md`, 'utf8');
  const headings = [...changelog.matchAll(/^## (\S+).*$/gm)];
  return headings.map((h, i) => ({ version: h[1]!, text: changelog.slice(h.index, headings[i + 1]?.index) }));
}

/** Whether this copy of the project has its git history (the Node 22 pass of .ci/run copies it without). */
function hasGit(): boolean {
  try {
    execFileSync('git', ['rev-parse', '--git-dir'], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const compare = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  return x!.map((n, i) => n - y![i]!).find((d) => d !== 0) ?? 0;
};

describe('CHANGELOG.md', () => {
  it('has a MAJOR.MINOR.PATCH heading per release, newest first, the newest being package.json’s version', () => {
    const found = releases().map((r) => r.version);
    expect(found.length).toBeGreaterThan(1);
    for (const v of found) expect(v).toMatch(/^\d+\.\d+\.\d+$/);
    expect([...found].sort((a, b) => compare(b, a))).toEqual(found);
    expect(found[0]).toBe(version);
  });

  it('sdc --version prints the newest release', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(releases()[0]!.version);
  });

  it('names every migration in exactly one release', () => {
    const all = releases();
    for (const name of Object.keys(migrations(SQLITE_DIALECT))) {
      const naming = all.filter((r) => r.text.includes(`\`${name}\``)).map((r) => r.version);
      expect(naming, name).toHaveLength(1);
    }
  });

  it.skipIf(!hasGit())('names, for every earlier release, a commit of this repository it was cut from', () => {
    for (const release of releases().slice(1)) {
      const commit = /Cut from commit ([0-9a-f]{40})/.exec(release.text)?.[1];
      expect(commit, release.version).toBeDefined();
      expect(() => execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' }), release.version).not.toThrow();
    }
  });
});
