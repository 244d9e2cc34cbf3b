import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { testCatalog } from './catalog-contract.js';

testCatalog('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-catalog-'));
  const catalog = await openCatalog(`sqlite:${join(dir, 'catalog.db')}`);
  return {
    catalog,
    async dispose() {
      await catalog.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
