import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../helpers/lazy-build.js';
import { runCli } from '../helpers/run-cli.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;

// The Quick start's install step, word for word but into a scratch prefix: `npm install -g .`
// links the clone's built `sdc` (dist, built here when src changed) onto <prefix>/bin.
// npm reads the whole dependency tree for it: ~40 s on 2 loaded cores, hence the hook's own bound.
const INSTALL_MS = 5 * 60_000;
describe('sdc on the PATH', { timeout: 120_000, tags: ['slow'] }, () => {
  let prefix: string;
  let elsewhere: string;
  beforeAll(async () => {
    prefix = await mkdtemp(join(tmpdir(), 'sdc-prefix-'));
    elsewhere = await mkdtemp(join(tmpdir(), 'sdc-elsewhere-'));
    await ensureDist();
    await run('npm', ['install', '-g', '.', '--prefix', prefix, '--offline', '--no-audit', '--no-fund'], { cwd: ROOT, timeout: INSTALL_MS });
  }, INSTALL_MS);
  afterAll(async () => {
    await rm(prefix, { recursive: true, force: true });
    await rm(elsewhere, { recursive: true, force: true });
  });

  it('npm install -g . puts sdc on the PATH; sdc --version and -V print the version, exit 0', async () => {
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` };
    for (const flag of ['--version', '-V']) {
      const { stdout } = await run('sdc', [flag], { cwd: elsewhere, env });
      expect(stdout.trim()).toBe(version);
    }
  });

  it('npx sdc works inside the clone', async () => {
    const { stdout } = await run('npx', ['sdc', '--version'], { cwd: ROOT });
    expect(stdout.trim()).toBe(version);
  });
});

describe('sdc usage errors', () => {
  it('a mistyped command prints only the suggestion and a pointer to --help, exit 2', async () => {
    const result = await runCli(['qurey']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('(Did you mean query?)');
    expect(result.stderr).toContain("run 'sdc --help'");
    expect(result.stderr).not.toContain('Commands:');
    expect(result.stderr.trim().split('\n')).toHaveLength(3);
  });

  it('--version after a command is still that command’s filter', async () => {
    const result = await runCli(['query', '--version', 'v00-01', '--url', 'ftp://nowhere']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('must be an http(s) address');
    expect(result.stdout).not.toContain(version);
  });
});
