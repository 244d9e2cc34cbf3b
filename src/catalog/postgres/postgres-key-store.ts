import type { Kysely } from 'kysely';
import type pg from 'pg';
import { backendCall } from '../../errors/index.js';
import { keyIdOf, keyMatches, verdictOf, type KeyCheck } from '../key-store.js';
import { KyselyKeyStore } from '../kysely-key-store.js';
import type { CatalogDatabase } from '../schema.js';
import { named } from './postgres-statements.js';

/** Key checks as a prepared statement; every check reads the database (a revoked key is refused at once). */
export class PostgresKeyStore extends KyselyKeyStore {
  constructor(
    db: Kysely<CatalogDatabase>,
    private readonly pool: pg.Pool,
  ) {
    super(db, 'PostgreSQL catalog');
  }

  async check(presented: string): Promise<KeyCheck> {
    const keyId = keyIdOf(presented);
    if (keyId === undefined) return { kind: 'invalid' };
    const { rows } = await backendCall(this.backend, 'key check', () => this.pool.query(named('SELECT name, key_hash, revoked_at, role FROM api_keys WHERE key_id = $1', [keyId])));
    const row = rows[0] as [string, string, string | null, string] | undefined;
    if (!row || !keyMatches(presented, row[1])) return { kind: 'invalid' };
    return verdictOf(row[0], row[3], row[2]);
  }
}
