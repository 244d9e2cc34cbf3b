import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { NO_DATABASE, openTestPostgresCatalog, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { recordOf, testCatalog } from './catalog-contract.js';

describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'postgres' : NO_DATABASE, () => {
  testCatalog('postgres', openTestPostgresCatalog);

  describe('postgres catalog', () => {
    it('orders file_path byte by byte whatever the database locale (column collation C)', async () => {
      const schema = testSchema();
      const catalog = await openCatalog(schema.url);
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query(
          `select collation_name from information_schema.columns where table_schema = $1 and table_name = 'files' and column_name = 'file_path'`,
          [schema.schema],
        );
        expect(rows).toEqual([{ collation_name: 'C' }]);
      } finally {
        await client.end();
        await catalog.close();
        await schema.drop();
      }
    });

    it('keeps deployments in different schemas of one database apart, migrations included', async () => {
      const first = testSchema();
      const second = testSchema();
      const a = await openCatalog(first.url);
      try {
        // The second schema is new while the first already has the migrator's tables.
        const b = await openCatalog(second.url);
        await b.insert(recordOf('imap_lo_l1a_de_20240106_20240106_v00-01.cdf'));
        expect(await a.get('imap/lo/l1a/2024/01/imap_lo_l1a_de_20240106_20240106_v00-01.cdf')).toBeUndefined();
        await b.close();
      } finally {
        await a.close();
        await first.drop();
        await second.drop();
      }
    });

    it('lets instances start together on a new schema: one creates and migrates it, all can use it', async () => {
      const schema = testSchema();
      const catalogs = await Promise.all(Array.from({ length: 4 }, () => openCatalog(schema.url)));
      try {
        expect(await catalogs[0]!.insert(recordOf('imap_lo_l1a_de_20240105_20240105_v00-01.cdf'))).toBe('inserted');
        expect(await catalogs[3]!.get('imap/lo/l1a/2024/01/imap_lo_l1a_de_20240105_20240105_v00-01.cdf')).toBeDefined();
      } finally {
        await Promise.all(catalogs.map((c) => c.close()));
        await schema.drop();
      }
    });

    it('refuses a bad schema name and an unreachable server with a message', async () => {
      await expect(openCatalog('postgres://postgres@127.0.0.1:5432/test?schema=Bad-Name')).rejects.toThrow(/schema "Bad-Name" is not valid/);
      await expect(openCatalog('postgres://postgres:secret@127.0.0.1:1/test')).rejects.toThrow(
        /cannot open the PostgreSQL catalog postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test/,
      );
    });
  });
});
