import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAMPS = join(ROOT, 'node_modules', '.cache', 'sdc-test-builds');
/** A build on this 2-core machine takes well under a minute; a lock held longer belongs to a dead run. */
const LOCK_WAIT_MS = 5 * 60_000;

/** A build the tests need, redone only when one of its inputs changed (size or mtime). */
interface Build {
  readonly name: string;
  /** Files and folders (walked) under the repository, relative to it. */
  readonly inputs: readonly string[];
  /** A file the build writes: while it is missing, the build runs whatever the stamp says. */
  readonly output: string;
  build(): Promise<unknown>;
}

async function listFiles(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return [];
  if (!info.isDirectory()) return [`${relative(ROOT, path)}\t${info.size}\t${info.mtimeMs}`];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(entries.filter((e) => e.name !== 'node_modules' && e.name !== 'dist').map((e) => listFiles(join(path, e.name))));
  return nested.flat();
}

async function fingerprint(inputs: readonly string[]): Promise<string> {
  const lines = (await Promise.all(inputs.map((input) => listFiles(join(ROOT, input))))).flat().sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `work` holding a lock shared by every test worker of this checkout (a folder made atomically). */
async function withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `sdc-test-build-${createHash('sha1').update(ROOT).digest('hex').slice(0, 12)}-${name}.lock`);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => 'NaN'));
      const age = Date.now() - ((await stat(lock).catch(() => undefined))?.mtimeMs ?? Date.now());
      // Its owner died mid-build (or before it wrote its pid): take the lock over.
      if ((Number.isInteger(owner) && !alive(owner)) || (!Number.isInteger(owner) && age > 10_000)) await rm(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${name}: the build lock ${lock} is still held by process ${owner}`);
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await writeFile(join(lock, 'pid'), String(process.pid));
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Runs a Node script in the repository; a failure carries what it printed (tsc's errors go to stdout). */
async function node(args: string[]): Promise<void> {
  try {
    await run(process.execPath, args, { cwd: ROOT, maxBuffer: 16 * 2 ** 20 });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

const done = new Map<string, Promise<void>>();

/** Builds `build` unless its stamp matches its inputs; once per test process, one process at a time. */
function ensureBuilt(build: Build): Promise<void> {
  let pending = done.get(build.name);
  if (!pending) {
    pending = (async () => {
      const stampFile = join(STAMPS, `${build.name}.sha256`);
      const current = async () => existsSync(join(ROOT, build.output)) && (await readFile(stampFile, 'utf8').catch(() => '')) === (await fingerprint(build.inputs));
      if (await current()) return;
      await withLock(build.name, async () => {
        if (await current()) return; // another worker built it while this one waited
        const inputs = await fingerprint(build.inputs);
        await build.build();
        await mkdir(STAMPS, { recursive: true });
        // A new file renamed over the old: never rewrite a file in place under node_modules (hard links).
        const fresh = `${stampFile}.${process.pid}`;
        await writeFile(fresh, inputs);
        await rename(fresh, stampFile);
      });
    })();
    done.set(build.name, pending);
  }
  return pending;
}

/** dist/, for the tests that run the built `sdc` (child-server.ts, npm install -g .). */
export function ensureDist(): Promise<void> {
  return ensureBuilt({
    name: 'dist',
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'],
    output: 'dist/cli/main.js',
    build: () => node([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')]),
  });
}

/** web/dist, the portal's assets, for the tests that load the portal (web/build.js; it imports from src). */
export function ensurePortal(): Promise<void> {
  return ensureBuilt({
    name: 'portal',
    inputs: ['web', 'src', 'package.json'],
    output: 'web/dist/index.html',
    build: () => node([join(ROOT, 'web', 'build.js')]),
  });
}
