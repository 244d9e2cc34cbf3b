import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ensureDist } from './lazy-build.js';

/** The built command line, compiled (when src changed) as soon as a test file imports this helper. */
export const SDC_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'cli', 'main.js');
await ensureDist();

export interface ChildServer {
  readonly url: string;
  readonly process: ChildProcess;
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** The log lines the server printed (the first 10 000: a long load run prints many more). */
  readonly logs: string[];
  /** What it printed on stderr (a crash's stack trace, if any). */
  stderr(): string;
}

/**
 * `sdc serve` as a separate process on a loopback port chosen by the OS, so a test can
 * kill it (SIGKILL, SIGTERM) the way an operator or the kernel would. Its log level
 * must be info or lower: the "Server listening" line tells the port. `bin` is this build's
 * `sdc` unless another is given (an earlier release's: test/helpers/previous-release.ts).
 */
export async function startChildServer(home: string, env: NodeJS.ProcessEnv = {}, bin: string = SDC_BIN): Promise<ChildServer> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--host', '127.0.0.1', '--home', home], {
    env: { PATH: process.env.PATH, SDC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code ?? 0)));
  const logs: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (logs.length < 10_000) logs.push(line);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then((how) => reject(new Error(`sdc serve ended (${how}) before listening: ${stderr}`)));
  });
  return { url, process: child, exited, logs, stderr: () => stderr };
}

/** Waits until the server has printed a log line whose `msg` is `msg` (repair runs after listen), and answers it parsed. */
export async function waitForLog(server: ChildServer, msg: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const line of server.logs) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.msg === msg) return parsed;
    }
    if (Date.now() > deadline) throw new Error(`no log line "${msg}" in ${timeoutMs} ms: ${server.logs.slice(-5).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
