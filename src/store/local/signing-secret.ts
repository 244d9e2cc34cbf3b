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
