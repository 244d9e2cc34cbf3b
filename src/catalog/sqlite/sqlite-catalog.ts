import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { KyselyCatalog } from '../kysely-catalog.js';
import { migrateToLatest } from '../migrations.js';
import type { CatalogDatabase } from '../schema.js';

/**
 * The embedded catalog: one SQLite file. WAL lets readers run beside the writer;
 * synchronous=FULL makes a committed insert survive a crash or power loss, so a PUT
 * that was acknowledged always has its record.
 */
export async function openSqliteCatalog(file: string): Promise<KyselyCatalog> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<CatalogDatabase>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(db as Kysely<unknown>);
  return new KyselyCatalog(db);
}
