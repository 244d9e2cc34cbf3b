import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { currentCliBuild } from './lazy-build.js';

const require = createRequire(import.meta.url);
/** The TypeScript loader, by absolute address so the CLI can run from any working directory. */
const TSX = pathToFileURL(require.resolve('tsx')).href;
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/**
 * Node's arguments for `sdc <args>`: the sources as esbuild transpiled them for this run
 * (lazy-build.ts, ensureCliBuild) while they are current, else the sources through tsx (a
 * file changed since, as in watch mode). The same code either way; tsx's loader costs each
 * process about a second of CPU more (test/README.md, "How long").
 */
function sdcArguments(args: readonly string[]): string[] {
  const built = currentCliBuild();
  return built === undefined ? ['--import', TSX, MAIN, ...args] : [built, ...args];
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  /** Added to a clean environment (PATH only), so the caller's own IMAP_* never leak in. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** A built entry point (e.g. an earlier release's dist/cli/main.js) run instead of the sources. */
  readonly bin?: string;
}

/** Node's arguments for `sdc <args>`: a built entry point if given, else the sources (sdcArguments). */
const nodeArgs = (args: readonly string[], bin?: string) => (bin === undefined ? sdcArguments(args) : [bin, ...args]);

/** Runs `sdc <args>` as a child process, the way a user does, from the sources (no `npm run build` needed) unless `bin` is given. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(args, options.bin), {
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
  const child = spawn(process.execPath, nodeArgs(args, options.bin), {
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
