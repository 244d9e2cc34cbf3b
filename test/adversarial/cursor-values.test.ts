import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SORT_FIELDS } from '../../src/wire/query.js';
import { testSchema, TEST_DATABASE_URL, type TestSchema } from '../helpers/postgres-test-schema.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const GENERATED_CURSORS = scale(120, 1200);

/** Characters no stored value has, that one engine or the other cannot hold as they are. */
const badCharacter = fc.oneof(
  fc.constant('\u0000'),
  fc.integer({ min: 1, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constant('\u007f'),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
);
/** A value with at least one such character somewhere in it. */
const poisoned = fc.tuple(fc.string({ maxLength: 12 }), badCharacter, fc.string({ maxLength: 12 })).map(([a, bad, b]) => a + bad + b);
const sorts = fc.constantFrom(...SORT_FIELDS.flatMap((f) => [f, `-${f}`]));
const encode = (sort: string, key: string, path: string) => Buffer.from(JSON.stringify([sort, key, path])).toString('base64url');

/** The same generated cursors on both engines: a 400 that names the cursor, never a 500, never a feed that opens. */
describe('decoded cursors and Last-Event-IDs are held to one rule on both engines', () => {
  const servers: { name: string; server: TestServer }[] = [];
  let schema: TestSchema | undefined;

  beforeAll(async () => {
    servers.push({ name: 'sqlite', server: await startTestServer() });
    if (TEST_DATABASE_URL) {
      schema = testSchema();
      servers.push({ name: 'postgres', server: await startTestServer({ catalog: schema.url }) });
    }
    for (const { server } of servers) {
      for (const v of ['v00-01', 'v00-02']) expect((await uploadFile(server.url, SAMPLE_PATH.replace('v00-01', v), v)).status).toBe(200);
    }
  });
  afterAll(async () => {
    for (const { server } of servers) await server.stop();
    await schema?.drop();
  });

  it('runs on PostgreSQL too', () => {
    // TEST_DATABASE_URL is set by the global setup when the local server is there (docs/reliability.md).
    if (!TEST_DATABASE_URL) console.warn('TEST_DATABASE_URL unset: the PostgreSQL half of the cursor checks was skipped');
    expect(servers.length).toBeGreaterThan(0);
  });

  it('a cursor whose position holds NUL, a control character or a lone surrogate: 400 saying so, on every engine', async () => {
    await fc.assert(
      fc.asyncProperty(sorts, fc.boolean(), poisoned, fc.string({ maxLength: 20 }), async (sort, inKey, bad, other) => {
        const cursor = inKey ? encode(sort, bad, other) : encode(sort, other, bad);
        for (const { name, server } of servers) {
          const res = await fetch(`${server.url}/query?sort=${sort}&limit=1&cursor=${cursor}`);
          const body = await res.text();
          expect(res.status, `${name}: ${body}`).toBe(400);
          expect(body).toMatch(/^"Invalid cursor .*expected a cursor exactly as a previous answer gave it/);
        }
      }),
      { numRuns: GENERATED_CURSORS },
    );
  }, 120_000);

  it('the same values as Last-Event-ID: 400 before any feed opens, on every engine', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), poisoned, async (inKey, bad) => {
        const id = inKey ? encode('ingestion_date', bad, 'x') : encode('ingestion_date', '2024-01-01T00:00:00.000Z', bad);
        for (const { name, server } of servers) {
          const abort = new AbortController();
          const res = await fetch(`${server.url}/events`, { headers: { 'Last-Event-ID': id }, signal: abort.signal });
          const status = res.status;
          const body = status === 400 ? await res.text() : '';
          abort.abort();
          expect(status, `${name}: the feed opened for Last-Event-ID ${id}`).toBe(400);
          expect(body).toMatch(/Invalid Last-Event-ID: expected a cursor exactly as a previous answer gave it/);
        }
      }),
      { numRuns: Math.ceil(GENERATED_CURSORS / 4) },
    );
  }, 120_000);

  it('any other cursor value is answered alike by both engines, never with a 500', async () => {
    let statuses = 0;
    await fc.assert(
      fc.asyncProperty(sorts, fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), async (sort, key, path) => {
        const cursor = encode(sort, key, path);
        const answers = [];
        for (const { server } of servers) answers.push((await fetch(`${server.url}/query?sort=${sort}&limit=1&cursor=${cursor}`)).status);
        for (const status of answers) expect(status).toBeLessThan(500);
        expect(new Set(answers).size).toBe(1);
        statuses++;
      }),
      { numRuns: GENERATED_CURSORS },
    );
    recordFigures('cursor-values', { engines: servers.length, cursors_tried: statuses + GENERATED_CURSORS });
  }, 120_000);
});
