import { execFile, type ExecFileOptions } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/**
 * podman's settings for this kind of machine (runc, cgroupfs, no default rlimits):
 * scripts/podman-containers.conf, given to every podman and buildah call of the tests.
 */
const env = { ...process.env, CONTAINERS_CONF: resolve(REPO_ROOT, 'scripts/podman-containers.conf') };

/** The base the CI builds locally (scripts/container-base.sh) unless SDC_BASE_IMAGE names another. */
export const BASE_IMAGE = process.env.SDC_BASE_IMAGE ?? 'localhost/sdc-base:bookworm-node22';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program with podman's settings; rejects with its output when it exits non-zero. */
export async function exec(file: string, args: readonly string[], options: ExecFileOptions = {}): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(file, args, { env, cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', ...options });
    return { stdout: String(stdout), stderr: String(stderr) };
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`.slice(0, 8000), { cause: err });
  }
}

export const podman = (args: readonly string[], options?: ExecFileOptions) => exec('podman', args, options);

async function works(file: string, args: readonly string[]): Promise<string | undefined> {
  try {
    await exec(file, args, { timeout: 60_000 });
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n').find((line) => line.trim()) ?? 'failed';
  }
}

/**
 * Why the container test cannot run on this machine, or undefined when it can: podman must run
 * a container here, and the base image must exist or be buildable (debootstrap and buildah).
 */
export async function whyNoPodman(): Promise<string | undefined> {
  if (await works('sh', ['-c', 'command -v podman'])) return 'podman is not installed (apt-get install podman runc)';
  const info = await works('podman', ['info']);
  if (info) return `podman cannot run here: ${info}`;
  if (process.env.SDC_BASE_IMAGE || !(await works('podman', ['image', 'exists', BASE_IMAGE]))) return undefined;
  const tools = await works('sh', ['-c', 'command -v debootstrap && command -v buildah']);
  return tools ? `no base image ${BASE_IMAGE} and debootstrap or buildah missing to build it (apt-get install debootstrap buildah)` : undefined;
}
