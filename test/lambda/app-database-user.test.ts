import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCatalog } from '../../src/catalog/open-catalog.js';
import { APP_SECRET_VARIABLE, migrateAndGrant } from '../../src/lambda/migrate-handler.js';
import { recordOf } from '../contract/catalog-contract.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';

const MASTER_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SdcDatabaseSecret-AbCdEf';
const APP_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SdcAppDatabaseSecret-GhIjKl';

/**
 * The migrate function's SQL on the machine's PostgreSQL: the migrations as the master user, then
 * the application user with row rights only (docs/deploy-aws.md, Database users). The Parameters
 * and Secrets extension is stood in for by a local server (it cannot run here); the role is
 * named per run and dropped afterwards, as other tests share the server.
 */
describe.skipIf(!TEST_DATABASE_URL)(`the application database user made at deploy${TEST_DATABASE_URL ? '' : ` (${NO_DATABASE})`}`, () => {
  const role = `sdc_app_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let schema: TestSchema;
  let server: Server;
  let env: NodeJS.ProcessEnv;
  const admin = () => new pg.Client({ connectionString: TEST_DATABASE_URL, application_name: role });
  /** SDC_CATALOG as the functions get it, with the application user filled in. */
  const appUrl = () => {
    const url = new URL(schema.url);
    url.username = role;
    return url.toString();
  };

  beforeAll(async () => {
    schema = testSchema();
    const master = new URL(TEST_DATABASE_URL!).username;
    server = createServer((req, res) => {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('secretId');
      const fields = id === MASTER_ARN ? { username: master, password: 'master-password' } : id === APP_ARN ? { username: role, password: 'app-password' } : undefined;
      res.writeHead(fields ? 200 : 400, { 'content-type': 'application/json' }).end(JSON.stringify(fields ? { SecretString: JSON.stringify(fields) } : { message: 'ResourceNotFoundException' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const noUser = new URL(schema.url);
    noUser.username = '';
    env = {
      SDC_CATALOG: noUser.toString(),
      SDC_CATALOG_SECRET_ARN: MASTER_ARN,
      [APP_SECRET_VARIABLE]: APP_ARN,
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String((server.address() as AddressInfo).port),
    };
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await schema.drop();
    const client = admin();
    await client.connect();
    try {
      // Only this run's role: its remaining privileges (default privileges) first, then the role.
      await client.query(`drop owned by "${role}"`).catch(() => undefined);
      await client.query(`drop role if exists "${role}"`);
    } finally {
      await client.end();
    }
  });

  it('migrates as the master user, then makes a login role; a second deploy runs again without harm', async () => {
    const first = await migrateAndGrant(env);
    expect(first.appUser).toBe(role);
    expect(first.migrated.length).toBeGreaterThan(0);
    const second = await migrateAndGrant(env);
    expect(second).toEqual({ migrated: [], appUser: role });
    const client = admin();
    await client.connect();
    try {
      const { rows } = await client.query<{ rolcanlogin: boolean; rolsuper: boolean; rolcreatedb: boolean; rolcreaterole: boolean }>(
        'select rolcanlogin, rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = $1',
        [role],
      );
      expect(rows).toEqual([{ rolcanlogin: true, rolsuper: false, rolcreatedb: false, rolcreaterole: false }]);
    } finally {
      await client.end();
    }
  }, 60_000);

  it('lets the application user open the catalog and read and write records and keys', async () => {
    const catalog = await openCatalog(appUrl());
    try {
      const record = recordOf('imap_swe_l1a_sci_20240105_20240105_v00-01.cdf');
      expect(await catalog.insert(record)).toBe('inserted');
      expect((await catalog.get(record.file_path))?.file_path).toBe(record.file_path);
      const { key } = await catalog.keys().create('swe-pipeline');
      expect(await catalog.keys().check(key)).toMatchObject({ kind: 'valid', name: 'swe-pipeline' });
      expect(await catalog.keys().revoke('swe-pipeline')).toBe('revoked');
    } finally {
      await catalog.close();
    }
  }, 60_000);

  it('refuses the application user any change to the schema: no table created, altered or dropped', async () => {
    const asApp = new URL(TEST_DATABASE_URL!);
    asApp.username = role;
    const client = new pg.Client({ connectionString: asApp.toString(), application_name: role });
    await client.connect();
    try {
      expect((await client.query<{ u: string }>('select current_user as u')).rows[0]!.u).toBe(role);
      await client.query(`set search_path to "${schema.schema}"`);
      const refused = async (statement: string) => {
        const err = (await client.query(statement).then(() => undefined, (e: unknown) => e)) as { code?: string } | undefined;
        expect(err?.code, statement).toBe('42501');
      };
      await refused('create table intruder (a int)');
      await refused('drop table files');
      await refused('alter table files add column intruder int');
      await refused('truncate files');
      await refused(`create schema "${role}_own"`);
      const { rows } = await client.query<{ n: string }>('select count(*) as n from files');
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await client.end();
    }
  }, 60_000);
});
