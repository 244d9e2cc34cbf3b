import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What `sdc login` keeps for one service (docs/client.md, "Signing in"). */
export interface StoredSignIn {
  readonly issuer: string;
  readonly clientId: string;
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** When the access token ends, epoch seconds. */
  readonly expiresAt: number;
}

/** `$XDG_CONFIG_HOME/sdc/sign-in.json`, else `~/.config/sdc/sign-in.json`: the user's own config folder. */
export function signInFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'sdc', 'sign-in.json');
}

async function readAll(file: string): Promise<Record<string, StoredSignIn>> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Record<string, StoredSignIn>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${file} cannot be read (${(err as Error).message}): remove it and run sdc login again`);
  }
}

/** The sign-in kept for a service address, if any. */
export async function loadSignIn(file: string, serviceUrl: string): Promise<StoredSignIn | undefined> {
  return (await readAll(file))[serviceUrl];
}

/**
 * Keeps (or, with undefined, forgets) the sign-in of a service. Tokens are secrets: the folder
 * is 0700 and the file 0600 from its first byte (written beside, then renamed over).
 */
export async function saveSignIn(file: string, serviceUrl: string, signIn: StoredSignIn | undefined): Promise<void> {
  const all = await readAll(file);
  if (signIn === undefined) delete all[serviceUrl];
  else all[serviceUrl] = signIn;
  const folder = join(file, '..');
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
}
