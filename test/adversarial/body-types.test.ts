import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scale } from '../reliability/figures.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const CASES = scale(60, 600);
const TOKEN = 'body-types-token';

interface BodySchema {
  readonly type?: string;
  readonly properties?: Record<string, { readonly type?: string }>;
  readonly required?: readonly string[];
}

/** A JSON value of any type but `type` (the schema's): what a coercing validator would turn into one. */
function wrongTyped(type: string | undefined): fc.Arbitrary<unknown> {
  const kinds: [string, fc.Arbitrary<unknown>][] = [
    ['boolean', fc.boolean()],
    ['integer', fc.integer()],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true })],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 2 })],
    ['string', fc.string({ minLength: 1, maxLength: 8 })],
  ];
  return fc.oneof(...kinds.filter(([kind]) => kind !== type && !(type === 'number' && kind === 'integer')).map(([, arbitrary]) => arbitrary));
}

describe('no route schema coerces a JSON body (docs/api.md, "Request bodies")', () => {
  let server: TestServer;
  let curator: string;
  beforeAll(async () => {
    server = await startTestServer({ eventsToken: TOKEN });
    expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes\n')).status).toBe(200);
    curator = (await server.ctx.catalog.keys().create('curator-body-types', 'curator')).key;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('walks every route with a body schema and sends each field a value of another type: always 4xx, nothing changed', async () => {
    const routes = server.app.accessTable().filter((entry) => entry.body !== undefined);
    // The withdrawal at least (a route with typed fields) and the S3 events (an object body).
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(['POST /withdraw/*', 'POST /events/s3']));
    let sent = 0;
    for (const route of routes) {
      const schema = route.body as BodySchema;
      const url = `${server.url}${route.url.replace('*', SAMPLE_PATH)}`;
      const headers = { 'Content-Type': 'application/json', 'X-API-Key': curator, Authorization: `Bearer ${TOKEN}` };
      const fields = Object.entries(schema.properties ?? {});
      // A body of the wrong type as a whole, and each field of the wrong type in an otherwise valid body.
      const bodies = fc.oneof(
        wrongTyped(schema.type),
        ...fields.map(([name, field]) =>
          wrongTyped(field.type).map((value) => {
            const valid = Object.fromEntries((schema.required ?? []).map((required) => [required, 'checked by body-types.test.ts']));
            return { ...valid, [name]: value };
          }),
        ),
      );
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          sent++;
          const res = await fetch(url, { method: route.method, headers, body: JSON.stringify(body) });
          const text = await res.text();
          expect(res.status, `${route.method} ${route.url} ${JSON.stringify(body)}: ${text}`).toBeGreaterThanOrEqual(400);
          expect(res.status, text).toBeLessThan(500);
        }),
        { numRuns: CASES },
      );
    }
    expect(sent).toBeGreaterThan(0);
    // Nothing was withdrawn by a coerced reason.
    expect((await server.ctx.catalog.get(SAMPLE_PATH))?.status).toBeUndefined();
  }, 120_000);

  it('a withdrawal whose reason is not text is a 400 that says so', async () => {
    for (const reason of [false, 5, ['x']]) {
      const res = await fetch(`${server.url}/withdraw/${SAMPLE_PATH}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': curator },
        body: JSON.stringify({ reason }),
      });
      expect([res.status, res.headers.get('x-error-code')]).toEqual([400, 'SDC_INVALID_WITHDRAWAL']);
      expect(await res.text()).toMatch(/reason/);
    }
  });
});
