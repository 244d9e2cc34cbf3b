import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteCatalog } from '../../src/catalog/sqlite/sqlite-catalog.js';
import { describeCatalogCoverage } from './catalog-coverage.suite.js';

describeCatalogCoverage('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-coverage-'));
  const catalog = await openSqliteCatalog(join(dir, 'catalog.db'));
  return {
    catalog,
    async dispose() {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
