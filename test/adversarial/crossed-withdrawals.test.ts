import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema } from '../helpers/postgres-test-schema.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const PAIRS = 20;
const pathOf = (side: 'a' | 'b', i: number) => `imap/mag/l1b/2024/01/imap_mag_l1b_cross${side}${i}_20240105_20240105_v00-01.cdf`;

/**
 * Crossed withdrawals, A superseded by B while B is superseded by A, all at once: the
 * withdrawal locks both rows in one order (src/catalog/sql-catalog.ts), so one of each pair
 * wins (200) and the other is refused (400: its replacement is withdrawn), never a deadlock's 5xx
 * (docs/trust.md, "Attacks tried on the lifecycle").
 */
function crossedWithdrawals(label: string, catalog: () => Promise<{ settings: { catalog?: string }; dispose(): Promise<void> }>) {
  describe(`crossed withdrawals (${label})`, () => {
    let server: TestServer;
    let dispose: () => Promise<void>;
    let curator: string;

    beforeAll(async () => {
      const backend = await catalog();
      dispose = () => backend.dispose();
      server = await startTestServer({ rateLimit: '0', ...backend.settings });
      for (let i = 0; i < PAIRS; i++) {
        for (const side of ['a', 'b'] as const) expect((await uploadFile(server.url, pathOf(side, i), `${side}${i}\n`)).status).toBe(200);
      }
      curator = (await server.ctx.catalog.keys().create('curator-crossed', 'curator')).key;
    });
    afterAll(async () => {
      await server?.stop();
      await dispose?.();
    });

    it(`${PAIRS} pairs withdrawn crosswise at once: one of each pair 200, the other 409 or 400, never a 5xx`, { timeout: 60_000 }, async () => {
      const withdraw = async (path: string, replacement: string) => {
        const res = await fetch(`${server.url}/withdraw/${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': curator },
          body: JSON.stringify({ reason: 'crossed', superseded_by: replacement }),
        });
        return `${res.status} ${await res.text()}`;
      };
      const pairs = await Promise.all(
        Array.from({ length: PAIRS }, (_, i) => Promise.all([withdraw(pathOf('a', i), pathOf('b', i)), withdraw(pathOf('b', i), pathOf('a', i))])),
      );
      for (const answers of pairs) {
        expect(answers.filter((answer) => answer.startsWith('200 ')), answers.join(' | ')).toHaveLength(1);
        expect(answers.filter((answer) => /^(400|409) /.test(answer)), answers.join(' | ')).toHaveLength(1);
      }
    });
  });
}

crossedWithdrawals('SQLite', async () => ({ settings: {}, dispose: async () => undefined }));

if (TEST_DATABASE_URL) {
  crossedWithdrawals('PostgreSQL', async () => {
    const schema = testSchema();
    return { settings: { catalog: schema.url }, dispose: () => schema.drop() };
  });
} else {
  describe('crossed withdrawals (PostgreSQL)', () => {
    it.skip(NO_DATABASE, () => undefined);
  });
}
