import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const FILES = 12;
const AT_ONCE = 8;
const pathOf = (i: number) => `imap/mag/l1b/2024/01/imap_mag_l1b_curate${i}_20240105_20240105_v00-01.cdf`;

/**
 * Every curator action beside others of its kind and beside a withdrawal, all at once, on both
 * engines (docs/trust.md, "Attacks tried on the lifecycle"): releases over overlapping files,
 * one release retracted twice, a file withdrawn while a release takes it. Each answers what
 * happened (201, 200, 409 once retracted, 400 naming a file withdrawn meanwhile), never a 5xx
 * from a lock wait or a deadlock, and the catalog agrees with the answers.
 */
function concurrentCurators(label: string, catalog: () => Promise<{ settings: { catalog?: string }; dispose(): Promise<void> }>) {
  describe(`curator actions at once (${label})`, () => {
    let server: TestServer;
    let dispose: () => Promise<void>;
    let curator: string;
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${server.url}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': curator }, body: JSON.stringify(body) });
      // A success is JSON; a refusal the service's text (docs/api.md, Error codes).
      const text = await res.text();
      return { status: res.status, body: res.ok ? (JSON.parse(text) as Record<string, unknown>) : text };
    };

    beforeAll(async () => {
      const backend = await catalog();
      dispose = () => backend.dispose();
      server = await startTestServer({ rateLimit: '0', ...backend.settings });
      for (let i = 0; i < FILES; i++) expect((await uploadFile(server.url, pathOf(i), `file ${i}\n`)).status).toBe(200);
      curator = (await server.ctx.catalog.keys().create('curator-at-once', 'curator')).key;
    });
    afterAll(async () => {
      await server?.stop();
      await dispose?.();
    });

    it(`${AT_ONCE} releases over overlapping files at once: each 201, numbered once each, each manifest whole`, { timeout: 90_000 }, async () => {
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, n) => post('/releases', { title: `at once ${n}`, files: [pathOf(n % 4), pathOf((n + 1) % 4), pathOf(4)] })),
      );
      expect(answers.map((a) => a.status), JSON.stringify(answers)).toEqual(answers.map(() => 201));
      const numbers = answers.map((a) => (a.body as { release: number }).release).sort((x, y) => x - y);
      expect(new Set(numbers).size).toBe(AT_ONCE);
      for (const n of numbers) {
        const release = (await (await fetch(`${server.url}/releases/${n}`)).json()) as { files: unknown[] };
        expect(release.files).toHaveLength(3);
      }
    });

    it('one release retracted from several requests at once: one 200, the others 409', { timeout: 60_000 }, async () => {
      const made = await post('/releases', { title: 'to retract', files: [pathOf(5), pathOf(6)] });
      expect(made.status).toBe(201);
      const n = (made.body as { release: number }).release;
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => post(`/releases/${n}/retract`, { reason: `retraction ${i}` })));
      expect(answers.filter((a) => a.status === 200), JSON.stringify(answers)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409), JSON.stringify(answers)).toHaveLength(AT_ONCE - 1);
    });

    it('a file withdrawn while releases take it: the withdrawal 200, each release 201 with it or 400 naming it, never a 5xx', { timeout: 60_000 }, async () => {
      const target = pathOf(7);
      const [withdrawn, ...releases] = await Promise.all([
        post(`/withdraw/${target}`, { reason: 'withdrawn while released' }),
        ...Array.from({ length: AT_ONCE }, (_, i) => post('/releases', { title: `racing ${i}`, files: [target, pathOf(8)] })),
      ]);
      expect(withdrawn!.status, JSON.stringify(withdrawn)).toBe(200);
      for (const release of releases) {
        if (release.status === 201) continue;
        expect(release.status, JSON.stringify(release)).toBe(400);
        expect(String(release.body)).toContain(target.split('/').at(-1));
      }
    });
  });
}

concurrentCurators('SQLite', async () => ({ settings: {}, dispose: async () => undefined }));

if (TEST_DATABASE_URL) {
  concurrentCurators('PostgreSQL', async () => {
    const schema = testSchema();
    return { settings: { catalog: schema.url }, dispose: () => schema.drop() };
  });
} else {
  describe('curator actions at once (PostgreSQL)', () => {
    it.skip(NO_DATABASE, () => undefined);
  });
}
