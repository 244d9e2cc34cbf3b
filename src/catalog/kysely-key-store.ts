import type { Kysely, Selectable } from 'kysely';
import { backendCall } from '../errors/index.js';
import { transactionReportingCause } from './first-failure-transaction.js';
import {
  generateKey,
  hashKey,
  isKeyRole,
  KEY_ROLES,
  KeyNameError,
  keyNameProblem,
  type ApiKeyInfo,
  type KeyCheck,
  type KeyRole,
  type KeyStore,
  type RotateResult,
} from './key-store.js';
import type { ApiKeysTable, CatalogDatabase } from './schema.js';

/**
 * API keys in the catalog database, written once with Kysely for every adapter; each engine
 * checks a presented key its own way (`check`: a prepared statement). Every call to the
 * database goes through backendCall, as the catalog's.
 */
export abstract class KyselyKeyStore implements KeyStore {
  constructor(
    private readonly db: Kysely<CatalogDatabase>,
    /** The catalog as error messages name it. */
    protected readonly backend: string,
  ) {}

  abstract check(presented: string): KeyCheck | Promise<KeyCheck>;

  /** A call to the database, its driver failure reported as the catalog's; a refused name passes as it is. */
  private call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return backendCall(this.backend, operation, run, (err) => (err instanceof KeyNameError ? err : undefined));
  }

  create(name: string, role: KeyRole = 'uploader'): Promise<{ key: string; info: ApiKeyInfo }> {
    return this.call('key create', () => this.createOnce(name, role));
  }

  private async createOnce(name: string, role: KeyRole): Promise<{ key: string; info: ApiKeyInfo }> {
    const problem = keyNameProblem(name);
    if (problem) throw new KeyNameError(problem);
    if (!isKeyRole(role)) throw new KeyNameError(`Invalid role ${JSON.stringify(role)}: expected one of ${KEY_ROLES.join(', ')}.`);
    const taken = () => new KeyNameError(`A key named ${name} already exists (names are never reused, even after revoke). Choose another name.`);
    if (await this.nameExists(name)) throw taken();
    const { key, keyId } = generateKey();
    const row = { key_id: keyId, name, role, generation: 1, key_hash: hashKey(key), created_at: new Date().toISOString(), revoked_at: null };
    try {
      await this.db.insertInto('api_keys').values(row).execute();
    } catch (error) {
      // Two creates of one name raced past the check: the unique (name, generation) constraint refused the
      // second. Say so in the same words, whatever the driver's error looks like.
      if (await this.nameExists(name)) throw taken();
      throw error;
    }
    return { key, info: toInfo(row) };
  }

  private async nameExists(name: string): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('name').where('name', '=', name).executeTakeFirst()) !== undefined;
  }

  list(): Promise<ApiKeyInfo[]> {
    return this.call('key list', async () => (await this.db.selectFrom('api_keys').selectAll().orderBy('name').orderBy('generation').execute()).map(toInfo));
  }

  revoke(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'> {
    return this.call('key revoke', () => this.revokeOnce(name));
  }

  private async revokeOnce(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'> {
    if (!(await this.nameExists(name))) return 'unknown';
    const now = new Date().toISOString();
    // Every key of the name that still works, or would during a rotation's overlap, stops now.
    const { numUpdatedRows } = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('name', '=', name)
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', now)]))
      .executeTakeFirst();
    return numUpdatedRows > 0n ? 'revoked' : 'already_revoked';
  }

  rotate(name: string, overlapSeconds: number): Promise<RotateResult> {
    return this.call('key rotate', () => this.rotateOnce(name, overlapSeconds));
  }

  private async rotateOnce(name: string, overlapSeconds: number): Promise<RotateResult> {
    const now = new Date();
    const rows = await this.db.selectFrom('api_keys').select(['generation', 'role', 'revoked_at']).where('name', '=', name).execute();
    if (rows.length === 0) return { kind: 'unknown' };
    if (!rows.some((r) => r.revoked_at === null || r.revoked_at > now.toISOString())) return { kind: 'revoked' };
    const { key, keyId } = generateKey();
    const oldUntil = new Date(now.getTime() + overlapSeconds * 1000).toISOString();
    // The new key keeps the role of the name's latest one: a rotation changes the secret, not the rights.
    const latest = rows.reduce((a, b) => (Number(b.generation) > Number(a.generation) ? b : a));
    const row = {
      key_id: keyId,
      name,
      role: latest.role,
      generation: Number(latest.generation) + 1,
      key_hash: hashKey(key),
      created_at: now.toISOString(),
      revoked_at: null,
    };
    // One transaction: the new key exists exactly when the old ones have their end. A rotation
    // racing this one takes the same generation and is refused by (name, generation).
    // Reporting its first error: a full disk met at COMMIT stays a full disk (507), not
    // SQLite's "no transaction is active" from the ROLLBACK after it (first-failure-transaction.ts).
    await transactionReportingCause(this.db, async (trx) => {
      await trx.insertInto('api_keys').values(row).execute();
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: oldUntil })
        .where('name', '=', name)
        .where('key_id', '!=', keyId)
        .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', oldUntil)]))
        .execute();
    });
    return { kind: 'rotated', key, info: toInfo(row), oldUntil };
  }

  anyExist(): Promise<boolean> {
    return this.call('key check', async () => (await this.db.selectFrom('api_keys').select('key_id').limit(1).executeTakeFirst()) !== undefined);
  }
}

function toInfo(row: Selectable<ApiKeysTable>): ApiKeyInfo {
  return { name: row.name, role: isKeyRole(row.role) ? row.role : 'uploader', keyId: row.key_id, createdAt: row.created_at, ...(row.revoked_at ? { revokedAt: row.revoked_at } : {}) };
}
