import { execFile, execFileSync } from 'node:child_process';

/** Whether Debian's aria2 (`aria2c`) is on this machine. */
export const HAVE_ARIA2 = (() => {
  try {
    execFileSync('aria2c', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
export const NO_ARIA2 = 'skipped: no aria2c (apt-get install aria2)';

export interface Aria2Run {
  /** aria2c's exit status: 0 when every file was fetched and verified, 32 on a checksum failure. */
  readonly code: number;
  /** What it printed (stdout and stderr together). */
  readonly output: string;
}

/**
 * `aria2c -M <metalink> -d <dir>` as a user runs it, with no configuration file of the
 * machine's and no session kept: it downloads every file the document lists and checks
 * each against the document's SHA-256.
 */
export function runAria2(metalink: string, dir: string): Promise<Aria2Run> {
  const args = ['--no-conf', '-M', metalink, '-d', dir, '--summary-interval=0', '--console-log-level=warn', '--auto-file-renaming=false', '--max-tries=1'];
  return new Promise((resolve) => {
    execFile('aria2c', args, { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}
