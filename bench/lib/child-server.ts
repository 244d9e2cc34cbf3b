import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { onServerCore } from './interleave.js';
import { freePort } from '../../test/helpers/free-port.js';

/** A process under measurement: its address and a way to read its memory. */
export interface ChildServer {
  readonly url: string;
  readonly pid: number;
  rssMiB(): number;
  stop(): Promise<void>;
}

const ROOT = join(import.meta.dirname, '..', '..');

/** Resident memory of a process, from /proc (Linux). */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Waits for a child to print `LISTENING <url>`. */
function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const m = /LISTENING (\S+)/.exec(seen);
      if (m) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve(m[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${seen.slice(-2000)}`)));
  });
}

function wrap(child: ChildProcess, url: string): ChildServer {
  return {
    url,
    pid: child.pid!,
    rssMiB: () => rssOf(child.pid!),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * `sdc serve` from the build (or another build's dist/, to compare two versions in one run), on a
 * free loopback port and the server core, with the given environment; ready when /healthz answers.
 */
export async function startSdc(env: Record<string, string>, dist = join(ROOT, 'dist')): Promise<ChildServer> {
  const port = await freePort();
  const [command, args] = onServerCore(process.execPath, [join(dist, 'cli/main.js'), 'serve', '--port', String(port), '--host', '127.0.0.1']);
  const child = spawn(command, args, {
    // Rate limiting off: the load generator is one address asking as fast as it can.
    env: { ...process.env, SDC_LOG_LEVEL: 'info', SDC_RATE_LIMIT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Logs are read (as a log collector would) but not kept.
  child.stdout?.on('data', () => undefined);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`sdc serve exited with ${child.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (i > 600) throw new Error('sdc serve did not become healthy within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return wrap(child, url);
}

/** The baseline: a bare node:http server answering a small JSON string, in its own process. */
export async function startBareNode(): Promise<ChildServer> {
  const code = `
    const http = require('node:http');
    const body = JSON.stringify('http://127.0.0.1/store/imap/swe/l1a/2024/01/x.cdf?expires=1&signature=0');
    const s = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); });
    s.listen(0, '127.0.0.1', () => console.log('LISTENING http://127.0.0.1:' + s.address().port));
    process.on('SIGTERM', () => s.close(() => process.exit(0)));
  `;
  const [command, args] = onServerCore(process.execPath, ['-e', code]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return wrap(child, await waitForUrl(child));
}

/**
 * The yardstick (bench/minimal-peer.mjs) on the catalog, store and signing secret of an SDC_HOME;
 * with `features`, the second yardstick: the same plus the service's per-request features; with
 * `catalog` (a PostgreSQL URL), its reads go to that catalog instead of the home's SQLite one;
 * `script`: another version of the peer (the bench's --before-peer).
 */
export async function startMinimalPeer(home: string, features = false, env: Record<string, string> = {}, catalog?: string, script = join(ROOT, 'bench', 'minimal-peer.mjs')): Promise<ChildServer> {
  const flags = [...(features ? ['--features'] : []), ...(catalog === undefined ? [] : ['--catalog', catalog])];
  const [command, args] = onServerCore(process.execPath, [script, home, ...flags]);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  return wrap(child, await waitForUrl(child));
}

/** Runs `sdc <args>` of a build (its dist/) to its end, output left out; rejects on a non-zero exit with the end of its stderr. */
export function runSdc(args: string[], env: NodeJS.ProcessEnv, dist = join(ROOT, 'dist')): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dist, 'cli', 'main.js'), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`sdc ${args[0]} exited ${code}: ${stderr.slice(-500)}`))));
  });
}
