import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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

// Synchronous: a few hundred stats, milliseconds; run-cli.ts asks before each `sdc` it starts.
function listFiles(path: string): string[] {
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return [];
  if (!info.isDirectory()) return [`${relative(ROOT, path)}\t${info.size}\t${info.mtimeMs}`];
  const entries = readdirSync(path, { withFileTypes: true });
  return entries.filter((e) => e.name !== 'node_modules' && e.name !== 'dist').flatMap((e) => listFiles(join(path, e.name)));
}

function fingerprint(inputs: readonly string[]): string {
  const lines = inputs.flatMap((input) => listFiles(join(ROOT, input))).sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** Whether `build`'s output is there and was built from its inputs as they are now. */
function isCurrent(build: Build): boolean {
  const stamp = join(STAMPS, `${build.name}.sha256`);
  return existsSync(join(ROOT, build.output)) && existsSync(stamp) && readFileSync(stamp, 'utf8') === fingerprint(build.inputs);
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
      if (isCurrent(build)) return;
      await withLock(build.name, async () => {
        if (isCurrent(build)) return; // another worker built it while this one waited
        const inputs = fingerprint(build.inputs);
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

/** Where ensureCliBuild writes: beside dist/, so that what src finds from its own place (../../package.json, ../../web/dist) is the same. */
const CLI_BUILD = '.test-cli';

const CLI: Build = {
  name: 'cli',
  inputs: ['src', 'tsconfig.json', 'package.json'],
  output: `${CLI_BUILD}/cli/main.js`,
  async build() {
    const fresh = join(ROOT, `${CLI_BUILD}.${process.pid}`);
    await rm(fresh, { recursive: true, force: true });
    const { build } = await import('esbuild');
    const src = join(ROOT, 'src');
    await build({ entryPoints: [`${src}/**/*.ts`], outdir: fresh, outbase: src, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
    await rm(join(ROOT, CLI_BUILD), { recursive: true, force: true });
    await rename(fresh, join(ROOT, CLI_BUILD));
  },
};

/**
 * src/ turned into JavaScript file by file by esbuild (no type check, as tsx does for each file it
 * runs), for the tests that start `sdc` as a child process (run-cli.ts): such a process takes a
 * fraction of the CPU time it takes under tsx's loader (test/README.md, "How long"). About a
 * second; made by the runs' globalSetup (cli-build.ts), again whenever src changed.
 */
export function ensureCliBuild(): Promise<void> {
  return ensureBuilt(CLI);
}

/** The built `sdc` if it was built from src as it is now, else undefined (run-cli.ts then runs the sources through tsx). */
export function currentCliBuild(): string | undefined {
  return isCurrent(CLI) ? join(ROOT, CLI.output) : undefined;
}
