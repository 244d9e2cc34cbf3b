import { describe } from 'vitest';
import { NO_DATABASE, openTestPostgresCatalog, TEST_DATABASE_URL } from '../helpers/postgres-test-schema.js';
import { describeCatalogCoverage } from './catalog-coverage.suite.js';

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres' : NO_DATABASE, () => {
  describeCatalogCoverage('postgres', openTestPostgresCatalog);
});
