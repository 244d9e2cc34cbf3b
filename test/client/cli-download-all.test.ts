import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { formatBytes } from '../../src/wire/bytes.js';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const HAVE_PYTHON = spawnSync('python3', ['--version']).status === 0;

/**
 * Runs `sdc <args>` on a pseudo-terminal (python3's pty), answers `answer` once the
 * question shows, and returns what the terminal showed and the exit status.
 */
function onTerminal(args: string[], answer: string, env: Record<string, string>, cwd: string): Promise<{ code: number | null; screen: string }> {
  const script = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
answered = False
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not answered and b'[y/N]' in out:
        os.write(fd, sys.stdin.readline().encode())
        answered = True
sys.stdout.write(out.decode('utf-8', 'replace'))
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, process.execPath, '--import', TSX, MAIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
    child.stdin.end(`${answer}\n`);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, screen }));
  });
}

describe('sdc download --query without a filter: the whole archive, not without a word', { timeout: 120_000 }, () => {
  let world: ClientWorld;
  const tree = sampleTree();
  const paths = Object.keys(tree);
  const bytes = Object.values(tree).reduce((sum, b) => sum + b.length, 0);
  const what = `${paths.length} files, ${formatBytes(bytes)}`;

  beforeAll(async () => {
    world = await startClientWorld();
    const source = await world.folder('source');
    await writeTree(source, tree);
    const client = new Client({ url: world.url });
    for (const path of paths) await client.upload(join(source, path), { dataDir: source });
    await client.close();
  });
  afterAll(() => world?.stop());

  it('refuses without a terminal: says how many files and bytes, and how to go on (exit 2)', async () => {
    const dest = await world.folder('refused');
    const result = await runCli(['download', '--query'], { cwd: dest, env: world.env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `sdc download: --query without a filter selects the whole archive (${what}). Add a filter (e.g. --instrument swe --start-date 20240101), or --yes to download it all.`,
    );
    expect(world.proxy.seen('/download/')).toHaveLength(0);
  });

  it('--yes downloads it all, as scripts need', async () => {
    const dest = await world.folder('yes');
    const result = await runCli(['download', '--query', '--yes'], { cwd: dest, env: world.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`sdc download: ${paths.length} downloaded`);
  });

  // python3 gives the CLI a terminal; without it this case is named in the run's SKIPPED lines.
  it.skipIf(!HAVE_PYTHON)('asks on a terminal: n downloads nothing, y downloads everything', async () => {
    const no = await world.folder('tty-no');
    const declined = await onTerminal(['download', '--query'], 'n', world.env, no);
    expect(declined.screen).toContain(`sdc download: no filter given: this downloads the whole archive, ${what}, into ${no}. Continue? [y/N]`);
    expect(declined.screen).toContain('sdc download: nothing downloaded.');
    expect(declined.code).toBe(1);
    expect(existsSync(join(no, 'imap'))).toBe(false);

    const yes = await world.folder('tty-yes');
    const accepted = await onTerminal(['download', '--query'], 'y', world.env, yes);
    expect(accepted.code).toBe(0);
    for (const path of paths) expect(existsSync(join(yes, ...path.split('/')))).toBe(true);
  });
});
