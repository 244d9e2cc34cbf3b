import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What is known of a key, never the key itself. */
export interface ApiKeyInfo {
  readonly name: string;
  /** Public part of the key (`sdc_<key id>_...`): finds its row, safe to show. */
  readonly keyId: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
}

export type KeyCheck =
  | { readonly kind: 'valid'; readonly name: string }
  | { readonly kind: 'revoked'; readonly name: string; readonly revokedAt: string }
  | { readonly kind: 'invalid' };

/**
 * The API keys port. Keys are kept hashed; the plain key exists only in the answer to
 * `create`. Keys are never deleted, only revoked, so a name always means one key.
 */
export interface KeyStore {
  /** A new key named `name`; the only time its text is ever returned. */
  create(name: string): Promise<{ readonly key: string; readonly info: ApiKeyInfo }>;
  list(): Promise<ApiKeyInfo[]>;
  revoke(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'>;
  check(presented: string): Promise<KeyCheck>;
  /** True once any key was ever created (revoked ones count: revoking the last key must not open uploads). */
  anyExist(): Promise<boolean>;
}

export class KeyNameError extends Error {
  override name = 'KeyNameError';
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** `sdc_` + 16 hex (key id) + `_` + 43 base64url characters (256 random bits). */
const KEY = /^sdc_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;

/** Why a name is refused, or undefined: names show up in logs and records, so they stay plain. */
export function keyNameProblem(name: string): string | undefined {
  return NAME.test(name)
    ? undefined
    : `Invalid key name ${JSON.stringify(name)}: expected 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. swe-pipeline).`;
}

export function generateKey(): { readonly key: string; readonly keyId: string } {
  const keyId = randomBytes(8).toString('hex');
  return { key: `sdc_${keyId}_${randomBytes(32).toString('base64url')}`, keyId };
}

/** The key id of a well-formed key, else undefined. */
export function keyIdOf(presented: string): string | undefined {
  return KEY.exec(presented)?.[1];
}

/**
 * SHA-256, not a slow password hash: the key is 256 random bits, so no guessing attack
 * is helped by a fast hash, and checking a request stays cheap.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex SHA-256 digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
