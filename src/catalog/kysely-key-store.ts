import type { Kysely, Selectable } from 'kysely';
import { transactionReportingCause } from './first-failure-transaction.js';
import {
  generateKey,
  hashKey,
  isKeyRole,
  KEY_ROLES,
  keyIdOf,
  keyMatches,
  KeyNameError,
  keyNameProblem,
  type ApiKeyInfo,
  verdictOf,
  type KeyCheck,
  type KeyRole,
  type KeyStore,
  type RotateResult,
} from './key-store.js';
import type { ApiKeysTable, CatalogDatabase } from './schema.js';

/** API keys in the catalog database, written once with Kysely for every adapter. */
export class KyselyKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<CatalogDatabase>) {}

  async create(name: string, role: KeyRole = 'uploader'): Promise<{ key: string; info: ApiKeyInfo }> {
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

  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().orderBy('name').orderBy('generation').execute();
    return rows.map(toInfo);
  }

  async revoke(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'> {
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

  async rotate(name: string, overlapSeconds: number): Promise<RotateResult> {
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

  /** Widened to the port's value-or-promise: adapters whose driver answers at once (SQLite) return the verdict itself. */
  check(presented: string): KeyCheck | Promise<KeyCheck> {
    return this.lookUp(presented);
  }

  private async lookUp(presented: string): Promise<KeyCheck> {
    const keyId = keyIdOf(presented);
    if (keyId === undefined) return { kind: 'invalid' };
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst();
    if (!row || !keyMatches(presented, row.key_hash)) return { kind: 'invalid' };
    return verdictOf(row.name, row.role, row.revoked_at);
  }

  async anyExist(): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('key_id').limit(1).executeTakeFirst()) !== undefined;
  }
}

function toInfo(row: Selectable<ApiKeysTable>): ApiKeyInfo {
  return { name: row.name, role: isKeyRole(row.role) ? row.role : 'uploader', keyId: row.key_id, createdAt: row.created_at, ...(row.revoked_at ? { revokedAt: row.revoked_at } : {}) };
}
