import type { Database, Statement } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { backendCall } from '../../errors/index.js';
import { keyIdOf, keyMatches, verdictOf, type KeyCheck } from '../key-store.js';
import { KyselyKeyStore } from '../kysely-key-store.js';
import type { CatalogDatabase } from '../schema.js';

/** Key checks with prepared statements; every check reads the database (a revoked key is refused at once). */
export class SqliteKeyStore extends KyselyKeyStore {
  private readonly byId: Statement;
  private readonly any: Statement;

  constructor(db: Kysely<CatalogDatabase>, reader: Database) {
    super(db, 'SQLite catalog');
    this.byId = reader.prepare('SELECT name, key_hash, revoked_at, role FROM api_keys WHERE key_id = ?').raw();
    this.any = reader.prepare('SELECT 1 FROM api_keys LIMIT 1').pluck();
  }

  /** At once, no promise: better-sqlite3 answers synchronously. */
  check(presented: string): KeyCheck {
    const keyId = keyIdOf(presented);
    if (keyId === undefined) return { kind: 'invalid' };
    // [name, key_hash, revoked_at, role]
    const row = backendCall(this.backend, 'key check', () => this.byId.get(keyId)) as [string, string, string | null, string] | undefined;
    if (!row || !keyMatches(presented, row[1])) return { kind: 'invalid' };
    return verdictOf(row[0], row[3], row[2]);
  }

  override anyExist(): Promise<boolean> {
    return Promise.resolve(backendCall(this.backend, 'key check', () => this.any.get() !== undefined));
  }
}
