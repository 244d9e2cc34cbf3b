import { describe } from 'vitest';
import { openCatalog } from '../../src/catalog/index.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { describeCatalogCoverage } from './catalog-coverage.suite.js';

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres' : NO_DATABASE, () => {
  describeCatalogCoverage('postgres', async () => {
    const schema = testSchema();
    const catalog = await openCatalog(schema.url);
    return {
      catalog,
      async dispose() {
        await catalog.close();
        await schema.drop();
      },
    };
  });
});
