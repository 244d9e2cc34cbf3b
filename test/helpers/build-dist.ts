import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * vitest globalSetup: compiles src into dist once per run, so tests that start the
 * real `sdc` command as a child process (to kill it, or to run the CLI) run the code
 * under test, never a stale build.
 */
export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
}
