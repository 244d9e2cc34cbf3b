import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * What a key may do (docs/api.md, "API keys"): an `uploader` uploads; a `curator` may do all an
 * uploader may and also the archive's corrections (routes of access class `curator`). A `reader`
 * (granted to signed-in callers, docs/trust.md "Signed-in callers") uploads nothing.
 */
export type KeyRole = 'uploader' | 'curator' | 'reader';
export const KEY_ROLES: readonly KeyRole[] = ['uploader', 'curator'];

export function isKeyRole(value: string): value is KeyRole {
  return (KEY_ROLES as readonly string[]).includes(value);
}

/** What is known of a key, never the key itself. */
export interface ApiKeyInfo {
  readonly name: string;
  readonly role: KeyRole;
  /** Public part of the key (`sdc_<key id>_...`): finds its row, safe to show. */
  readonly keyId: string;
  readonly createdAt: string;
  /** When it stopped working, or (during a rotation's overlap) will. */
  readonly revokedAt?: string;
}

/** What `rotate` did: the new key of the name, and until when the old one still works. */
export type RotateResult =
  | { readonly kind: 'rotated'; readonly key: string; readonly info: ApiKeyInfo; readonly oldUntil: string }
  | { readonly kind: 'unknown' | 'revoked' };

export type KeyCheck =
  | { readonly kind: 'valid'; readonly name: string; readonly role: KeyRole }
  | { readonly kind: 'revoked'; readonly name: string; readonly revokedAt: string }
  | { readonly kind: 'invalid' };

/**
 * The API keys port. Keys are kept hashed; the plain key exists only in the answer to
 * `create`. Keys are never deleted, only revoked, so a name always means one key.
 */
export interface KeyStore {
  /** A new key named `name` (role `uploader` unless told); the only time its text is ever returned. */
  create(name: string, role?: KeyRole): Promise<{ readonly key: string; readonly info: ApiKeyInfo }>;
  list(): Promise<ApiKeyInfo[]>;
  /** Revokes every key of the name at once, including one still in a rotation's overlap. */
  revoke(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'>;
  /**
   * A new key for the same name and role (uploads keep their uploader name); the name's live keys keep
   * working for `overlapSeconds` more, then are revoked. A name with no live key is not rotated.
   */
  rotate(name: string, overlapSeconds: number): Promise<RotateResult>;
  /** The verdict on a presented key, read from the catalog each time; answered at once by backends that can (SQLite). */
  check(presented: string): KeyCheck | Promise<KeyCheck>;
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

/**
 * The verdict on a genuine key's row: revoked once its revocation time has come (a rotation
 * sets it ahead, docs/trust.md). ISO-8601 UTC times compare as strings.
 */
export function verdictOf(name: string, role: string, revokedAt: string | null, now = new Date().toISOString()): KeyCheck {
  if (revokedAt !== null && revokedAt <= now) return { kind: 'revoked', name, revokedAt };
  // A role this version does not know grants no more than an uploader's.
  return { kind: 'valid', name, role: isKeyRole(role) ? role : 'uploader' };
}

/** The key id of a well-formed key, else undefined. */
export function keyIdOf(presented: string): string | undefined {
  // A key seen genuine before is well-formed: its id is where the pattern puts it.
  return genuine.has(presented) ? presented.slice(4, 20) : KEY.exec(presented)?.[1];
}

/**
 * SHA-256, not a slow password hash: the key is 256 random bits, so no guessing attack
 * is helped by a fast hash, and checking a request stays cheap.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** How many genuine keys' hashes are remembered (a server sees a few dozen keys at most). */
const REMEMBERED = 1000;

/**
 * SHA-256 of presented keys that matched a stored hash: the hash of a string is a pure
 * function of it, so remembering it changes no verdict (every check still reads the key's row,
 * its hash and revocation, from the catalog); it spares the hashing on each request of a
 * client that sends its key every time. Only keys that matched are kept, so made-up keys
 * neither fill it nor push real ones out; oldest first out past REMEMBERED.
 */
const genuine = new Map<string, Buffer>();

/** True when the presented key's SHA-256 is the stored (hex) hash; constant-time comparison. */
export function keyMatches(presented: string, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, 'hex');
  const remembered = genuine.get(presented);
  const digest = remembered ?? createHash('sha256').update(presented, 'utf8').digest();
  if (stored.length !== 32 || !timingSafeEqual(digest, stored)) return false;
  if (remembered === undefined) {
    if (genuine.size >= REMEMBERED) genuine.delete(genuine.keys().next().value!);
    genuine.set(presented, digest);
  }
  return true;
}
