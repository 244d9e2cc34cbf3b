import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inOneRoundTrip } from '../../src/catalog/postgres/one-round-trip.js';
import { postgresPostWrite } from '../../src/catalog/postgres/postgres-post-write.js';
import { NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres-test-schema.js';

const product = { instrument: 'mag', data_level: 'l1a', descriptor: 'norm', start_date: '20240105' };
const created = { change: 'created' as const, file_path: 'imap/mag/l1a/2024/01/f.cdf', record: '{"a":1}', audience: 'public' as const };

it("sends the record's post-write step (refresh and change-log entries) to PostgreSQL as one statement, with no parameters", () => {
  const statements = postgresPostWrite([product], [created]);
  expect(statements).toHaveLength(1);
  expect(statements[0]!.params).toEqual([]);
  // The lock first, the entries last (post-write.ts), as when they were sent one by one.
  const text = statements[0]!.text;
  expect(text.indexOf('pg_advisory_xact_lock')).toBeLessThan(text.indexOf('UPDATE files'));
  expect(text.indexOf('coverage_days')).toBeLessThan(text.indexOf('changes_pending'));
});

// Parameters written as literals must reach PostgreSQL as the same values, whatever they hold.
describe.skipIf(!TEST_DATABASE_URL)(TEST_DATABASE_URL ? 'statements in one round trip on PostgreSQL' : NO_DATABASE, () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  it('gives each statement its parameters unchanged: quotes, backslashes, braces, commas, NULL, "$2" in a value, no elements', async () => {
    const odd = ["it's", 'back\\slash', 'dou"ble', '{brace},comma', 'NULL', '', '$2 ünï€ode', ' spaced '];
    const [statement] = inOneRoundTrip([
      { text: 'CREATE TEMP TABLE one_trip (n int, a text[], b text)', params: [] },
      { text: 'INSERT INTO one_trip VALUES (1, $1::text[], $2)', params: [odd, 'x\'\\"$1'] },
      { text: 'INSERT INTO one_trip VALUES (2, $1::text[], $2)', params: [[null, 'y'], null] },
      { text: 'INSERT INTO one_trip VALUES (3, $2::text[], $1)', params: ['z', []] },
    ]);
    await client.query(statement!.text, [...statement!.params]);
    const { rows } = await client.query<{ a: (string | null)[]; b: string | null }>('SELECT a, b FROM one_trip ORDER BY n');
    expect(rows).toEqual([
      { a: odd, b: 'x\'\\"$1' },
      { a: [null, 'y'], b: null },
      { a: [], b: 'z' },
    ]);
  });
});
