import { resolve } from 'node:path';
import type { Catalog } from './catalog.js';
import { openPostgresCatalog, type PostgresCatalogOptions } from './postgres/postgres-catalog.js';
import { redactPassword } from './postgres/postgres-url.js';
import { openSqliteCatalog } from './sqlite/sqlite-catalog.js';

/** Opens the catalog named by SDC_CATALOG: `sqlite:<file>` or `postgres://user@host/db[?schema=name]`. */
export async function openCatalog(url: string, options: PostgresCatalogOptions = {}): Promise<Catalog> {
  if (url.startsWith('sqlite:')) return openSqliteCatalog(resolve(url.slice('sqlite:'.length)));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgresCatalog(url, options);
  throw new Error(
    `SDC_CATALOG ${JSON.stringify(redactPassword(url))} is not supported; expected sqlite:<file> or postgres://user:password@host:5432/database`,
  );
}
