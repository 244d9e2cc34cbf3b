import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Catalog } from './catalog.js';
import { openPostgresCatalog, postgresCatalogExists, type PostgresCatalogOptions } from './postgres/postgres-catalog.js';
import { redactPassword } from './postgres/postgres-url.js';
import { openSqliteCatalog } from './sqlite/sqlite-catalog.js';

/** Opens the catalog named by SDC_CATALOG: `sqlite:<file>` or `postgres://user@host/db[?schema=name]`. */
export async function openCatalog(url: string, options: PostgresCatalogOptions = {}): Promise<Catalog> {
  if (url.startsWith('sqlite:')) {
    // `sqlite::memory:` is SQLite's in-memory database (as catalogExists says), not a file of that name.
    const file = url.slice('sqlite:'.length);
    return openSqliteCatalog(file === ':memory:' ? file : resolve(file));
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgresCatalog(url, options);
  throw new Error(
    `SDC_CATALOG ${JSON.stringify(describeCatalogUrl(url))} is not supported; expected sqlite:<file> or postgres://user:password@host:5432/database`,
  );
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
