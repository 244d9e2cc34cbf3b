import type { Kysely, Selectable } from 'kysely';
import {
  generateKey,
  hashKey,
  keyIdOf,
  keyMatches,
  KeyNameError,
  keyNameProblem,
  type ApiKeyInfo,
  type KeyCheck,
  type KeyStore,
} from './key-store.js';
import type { ApiKeysTable, CatalogDatabase } from './schema.js';

/** API keys in the catalog database, written once with Kysely for every adapter. */
export class KyselyKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<CatalogDatabase>) {}

  async create(name: string): Promise<{ key: string; info: ApiKeyInfo }> {
    const problem = keyNameProblem(name);
    if (problem) throw new KeyNameError(problem);
    const taken = () => new KeyNameError(`A key named ${name} already exists (names are never reused, even after revoke). Choose another name.`);
    if (await this.nameExists(name)) throw taken();
    const { key, keyId } = generateKey();
    const row = { key_id: keyId, name, key_hash: hashKey(key), created_at: new Date().toISOString(), revoked_at: null };
    try {
      await this.db.insertInto('api_keys').values(row).execute();
    } catch (error) {
      // Two creates of one name raced past the check: the unique name constraint refused the
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
    const rows = await this.db.selectFrom('api_keys').selectAll().orderBy('name').execute();
    return rows.map(toInfo);
  }

  async revoke(name: string): Promise<'revoked' | 'already_revoked' | 'unknown'> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('name', '=', name).executeTakeFirst();
    if (!row) return 'unknown';
    if (row.revoked_at) return 'already_revoked';
    await this.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('name', '=', name).execute();
    return 'revoked';
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
    return row.revoked_at ? { kind: 'revoked', name: row.name, revokedAt: row.revoked_at } : { kind: 'valid', name: row.name };
  }

  async anyExist(): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('key_id').limit(1).executeTakeFirst()) !== undefined;
  }
}

function toInfo(row: Selectable<ApiKeysTable>): ApiKeyInfo {
  return { name: row.name, keyId: row.key_id, createdAt: row.created_at, ...(row.revoked_at ? { revokedAt: row.revoked_at } : {}) };
}
