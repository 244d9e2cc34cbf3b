import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Catalog } from '../../src/catalog/index.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { FAST_LOOP, IN_TEST_ALL } from './test-scope.js';

/** The PostgreSQL the tests use; unset (or the fast loop, test/README.md) = those tests skip. */
export const TEST_DATABASE_URL = FAST_LOOP ? undefined : process.env.TEST_DATABASE_URL;

export const NO_DATABASE = FAST_LOOP
  ? `PostgreSQL tests ${IN_TEST_ALL}`
  : 'TEST_DATABASE_URL is unset: PostgreSQL tests skipped (set it, e.g. postgres://postgres@127.0.0.1:5432/test)';

export interface TestSchema {
  /** SDC_CATALOG naming a schema of its own in the test database. */
  readonly url: string;
  readonly schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/**
 * A fresh, uniquely named schema in TEST_DATABASE_URL, so test runs (and the
 * helpers sharing this database) never see each other's rows.
 */
export function testSchema(): TestSchema {
  if (!TEST_DATABASE_URL) throw new Error(NO_DATABASE);
  const schema = `sdc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('schema', schema);
  return {
    url: url.toString(),
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A client of TEST_DATABASE_URL connected with a test schema as its search_path; the caller ends it. */
export async function connectToSchema(schema: TestSchema): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema.schema}` });
  await client.connect();
  return client;
}

/** A PostgreSQL catalog in a fresh schema, and how to remove both: what the catalog suites run on. */
export async function openTestPostgresCatalog(): Promise<{ catalog: Catalog; dispose(): Promise<void> }> {
  const schema = testSchema();
  const catalog = await openCatalog(schema.url);
  return {
    catalog,
    async dispose() {
      try {
        await catalog.close();
      } finally {
        await schema.drop();
      }
    },
  };
}
