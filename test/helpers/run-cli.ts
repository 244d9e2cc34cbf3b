import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
/** The TypeScript loader, by absolute address so the CLI can run from any working directory. */
const TSX = pathToFileURL(require.resolve('tsx')).href;
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Added to a clean environment (PATH only), so the caller's own IMAP_* never leak in. */
  readonly env?: Record<string, string>;
  readonly cwd?: string;
}

/** Runs `sdc <args>` as a child process, the way a user does, from the sources (no build needed). */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A running `sdc` whose output is read line by line while it runs (e.g. `sdc watch`). */
export interface RunningCli {
  readonly stdoutLines: string[];
  readonly stderrLines: string[];
  /** Resolves once a line of stdout (or stderr) passes the test; fails if the CLI exits first. */
  waitFor(stream: 'stdout' | 'stderr', test: (line: string) => boolean): Promise<string>;
  /** Resolves with the exit status once the CLI ends by itself. */
  readonly exit: Promise<number | null>;
  /** Sends a signal and resolves with the exit status. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const waiters = new Set<() => void>();
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  for (const name of ['stdout', 'stderr'] as const) {
    let partial = '';
    child[name].setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      lines[name].push(...parts);
      for (const wake of waiters) wake();
    });
  }
  return {
    stdoutLines: lines.stdout,
    stderrLines: lines.stderr,
    exit,
    waitFor(stream, test) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines[stream].find(test);
          if (found !== undefined) {
            waiters.delete(check);
            resolve(found);
          } else if (exited) {
            waiters.delete(check);
            reject(new Error(`sdc exited before the expected line; stderr:\n${lines.stderr.join('\n')}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    stop(signal = 'SIGINT') {
      if (!exited) child.kill(signal);
      return exit;
    },
  };
}
