import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Catalog } from './catalog.js';
import type { FileRecord } from './file-record.js';
import type { MigrationPlan } from './migration-plan.js';
import { openPostgresCatalog, postgresCatalogExists, postgresMigrationPlan, type PostgresCatalogOptions } from './postgres/postgres-catalog.js';
import { redactPassword } from './postgres/postgres-url.js';
import { sqliteBulkLoad } from './sqlite/sqlite-bulk-load.js';
import { openSqliteCatalog, sqliteMigrationPlan } from './sqlite/sqlite-catalog.js';

/** Opens the catalog named by SDC_CATALOG: `sqlite:<file>` or `postgres://user@host/db[?schema=name]`. */
export async function openCatalog(url: string, options: PostgresCatalogOptions = {}): Promise<Catalog> {
  if (url.startsWith('sqlite:')) {
    // `sqlite::memory:` is SQLite's in-memory database (as catalogExists says), not a file of that name.
    const file = url.slice('sqlite:'.length);
    return openSqliteCatalog(file === ':memory:' ? file : resolve(file), options.onMigrated, options.migrate);
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgresCatalog(url, options);
  throw new Error(
    `SDC_CATALOG ${JSON.stringify(describeCatalogUrl(url))} is not supported; expected sqlite:<file> or postgres://user:password@host:5432/database`,
  );
}

/** What migrating the catalog the URL names would do (`sdc migrate --check`); the catalog must exist. */
export async function catalogMigrationPlan(url: string): Promise<MigrationPlan> {
  if (url.startsWith('sqlite:')) return sqliteMigrationPlan(resolve(url.slice('sqlite:'.length)));
  return postgresMigrationPlan(url);
}

/**
 * A bulk load by a process that holds nothing else of the catalog open (`sdc seed`): the
 * catalog is opened (created or migrated) and closed, then loaded. An SQLite file that no
 * other process has open is loaded with a rollback journal, which writes each page once
 * instead of twice (sqlite-bulk-load.ts); one that a server has open is loaded as
 * Catalog.bulkLoad loads it. Any other catalog is loaded through Catalog.bulkLoad.
 * Answers the number of new records, as bulkLoad does.
 */
export async function bulkLoadCatalog(url: string, records: Iterable<FileRecord> | AsyncIterable<FileRecord>): Promise<number> {
  const file = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;
  const catalog = await openCatalog(url);
  if (file === undefined || file === ':memory:') {
    try {
      return await catalog.bulkLoad(records);
    } finally {
      await catalog.close();
    }
  }
  await catalog.close();
  return sqliteBulkLoad(resolve(file), records, { alone: true });
}

/** Whether the catalog the URL names has been created (an SQLite file; a PostgreSQL schema with its tables). */
export async function catalogExists(url: string): Promise<boolean> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return file === ':memory:' || existsSync(resolve(file));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return postgresCatalogExists(url);
  return true; // openCatalog refuses an unsupported URL with its own message.
}

/** The catalog URL as messages and logs may show it: a PostgreSQL password hidden. */
export function describeCatalogUrl(url: string): string {
  return redactPassword(url);
}

// What the operator commands (src/cli) use of the adapters, through this one door:
// `sdc backup` / `sdc restore` of an SQLite file, and the PostgreSQL URL pg_dump is given.
export { backupSqliteCatalog, restoreSqliteCatalog, type CatalogCounts } from './sqlite/sqlite-backup.js';
export { parsePostgresUrl } from './postgres/postgres-url.js';
