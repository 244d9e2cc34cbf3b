import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CHANGE_LOG_LOCK } from '../../src/catalog/change-log.js';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { SCHEMA_CHANGE_LOCK_KEY } from '../../src/catalog/postgres/postgres-post-write.js';
import { POSTGRES_REFRESH_ALL_SQL } from '../../src/catalog/product-refresh.js';
import { connectToSchema, NO_DATABASE, openTestPostgresCatalog, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
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

    it('opens while other deployments in the same database drop their schemas and columns', async () => {
      const ours = testSchema();
      const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await churn.connect();
      let churning = true;
      const others = (async () => {
        // Another deployment's schema appearing, losing columns and vanishing, as fast as it can.
        for (let round = 0; churning; round++) {
          const other = `sdc_churn_${process.pid}_${round}`;
          const columns = Array.from({ length: 40 }, (_, i) => `c${i} serial`).join(', ');
          await churn.query(`create schema ${other}; create table ${other}.t (${columns})`);
          for (let i = 39; i > 30; i--) await churn.query(`alter table ${other}.t drop column c${i}`);
          await churn.query(`drop schema ${other} cascade`);
        }
      })();
      try {
        await (await openCatalog(ours.url)).close();
        // Each opening asks the migrator whether its tables exist: only our schema is looked at.
        for (let i = 0; i < 8; i++) await (await openCatalog(ours.url)).close();
      } finally {
        churning = false;
        await others;
        await churn.end();
        await ours.drop();
      }
    }, 120_000);

    // Advisory locks are one set for the whole database: each of the catalog's keys names its
    // schema, so a lock held in one deployment's schema holds its writers, never another's.
    it.each([
      // A commit of this schema in the middle of giving its change-log ids holds what its trigger takes (postgres-post-write.ts).
      ["the change log's lock, held by a commit giving its ids", `SELECT pg_advisory_xact_lock(${SCHEMA_CHANGE_LOCK_KEY}), pg_advisory_xact_lock_shared(${CHANGE_LOG_LOCK})`],
      // A large refresh of this schema (a bulk load) in the middle: it holds what its first statement takes (product-refresh.ts).
      ['the lock a large refresh takes first', POSTGRES_REFRESH_ALL_SQL[0]!],
    ])("holds this schema's writers while %s, never another schema's on the same server", async (_, lockSql) => {
      const here = testSchema();
      const elsewhere = testSchema();
      const catalog = await openCatalog(here.url);
      const other = await openCatalog(elsewhere.url);
      const holder = await connectToSchema(here);
      const ours = recordOf('imap_lo_l1a_de_20240107_20240107_v00-01.cdf');
      const theirs = recordOf('imap_lo_l1a_de_20240108_20240108_v00-01.cdf');
      try {
        await holder.query('BEGIN');
        await holder.query(lockSql);
        let written = false;
        const waiting = catalog.insert(ours).then(() => (written = true));
        // Another deployment's writer commits meanwhile, its entry readable at once.
        expect(await other.insert(theirs)).toBe('inserted');
        expect((await other.changes(0, 10)).map((e) => e.file_path)).toEqual([theirs.file_path]);
        expect(written).toBe(false);
        expect(await catalog.changes(0, 10)).toEqual([]);
        await holder.query('COMMIT');
        await waiting;
        expect(written).toBe(true);
        expect((await catalog.changes(0, 10)).map((e) => e.file_path)).toEqual([ours.file_path]);
      } finally {
        await holder.end();
        await other.close();
        await catalog.close();
        await here.drop();
        await elsewhere.drop();
      }
    }, 60_000);

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
