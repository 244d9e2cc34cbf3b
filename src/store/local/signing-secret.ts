import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The key of the local store's signatures: SDC_SIGNING_SECRET when set (share it
 * between instances), else a random one generated once into $SDC_HOME (mode 0600)
 * so addresses stay valid across restarts.
 */
export function loadSigningSecret(configured: string | undefined, home: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = join(home, 'signing-secret');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(home, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  try {
    // 'wx': if another process created it first, use theirs.
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/**
 * SDC_SIGNING_SECRET_PREVIOUS as a key, read as SDC_SIGNING_SECRET is (its text's bytes). A
 * secret generated into $SDC_HOME is used as the bytes its file's hex text spells: to retire
 * one, give `generated:<the file's text>`.
 */
export function previousSigningSecret(configured: string | undefined): Buffer | undefined {
  if (configured === undefined) return undefined;
  const generated = /^generated:([0-9a-f]{64})$/.exec(configured);
  return generated ? Buffer.from(generated[1]!, 'hex') : Buffer.from(configured, 'utf8');
}
