import { resolve } from 'node:path';
import type { Catalog } from './catalog.js';
import { openSqliteCatalog } from './sqlite/sqlite-catalog.js';

/** Opens the catalog named by SDC_CATALOG: `sqlite:<file>` (more adapters join here). */
export async function openCatalog(url: string): Promise<Catalog> {
  if (url.startsWith('sqlite:')) return openSqliteCatalog(resolve(url.slice('sqlite:'.length)));
  throw new Error(`SDC_CATALOG ${JSON.stringify(url)} is not supported; expected sqlite:<file>`);
}
