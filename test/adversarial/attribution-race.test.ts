import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from '../helpers/postgres-test-schema.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordFigures, scale } from '../reliability/figures.js';

const UPLOADS = scale(40, 200);
const READERS = 3;

/**
 * A reader that finds a stored file before its record indexes it on the spot, without
 * an uploader; the PUT that stored it must still leave its uploader in the record.
 */
function attributionRace(label: string, catalog: () => Promise<{ settings: { catalog?: string }; dispose(): Promise<void> }>) {
  describe(`the uploader of a signed PUT survives readers racing it (${label})`, () => {
    let server: TestServer;
    let dispose: () => Promise<void>;
    let key: string;

    beforeAll(async () => {
      const backend = await catalog();
      dispose = () => backend.dispose();
      server = await startTestServer({ rateLimit: '0', ...backend.settings });
      key = (await server.ctx.catalog.keys().create('alpha')).key;
    });
    afterAll(async () => {
      await server.stop();
      await dispose();
    });

    it(`${UPLOADS} uploads with a key while ${READERS} readers poll each name: every record has the uploader`, { timeout: scale(60_000, 300_000) }, async () => {
      const unattributed: string[] = [];
      let readerAnswers = 0;
      for (let i = 0; i < UPLOADS; i++) {
        const path = `imap/mag/l1b/2024/01/imap_mag_l1b_race${i}_20240105_20240105_v00-01.cdf`;
        const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': key } })).json()) as string;
        let done = false;
        const reader = async (target: string) => {
          while (!done) {
            const res = await fetch(`${server.url}${target}`, { headers: { 'X-API-Key': key }, redirect: 'manual' });
            await res.arrayBuffer();
            readerAnswers++;
          }
        };
        const readers = [`/download/${path}`, `/download/${path.slice(path.lastIndexOf('/') + 1)}`, `/upload/${path}`].slice(0, READERS).map(reader);
        // Let the readers start polling before the bytes arrive.
        await new Promise((resolve) => setTimeout(resolve, 5));
        const put = await fetch(address, { method: 'PUT', body: `bytes of ${path}`, headers: { 'Content-Type': '' } });
        done = true;
        await Promise.all(readers);
        expect(put.status).toBe(200);
        const [record] = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { uploader?: string | null }[];
        if (record?.uploader !== 'alpha') unattributed.push(path);
      }
      recordFigures(`attribution-${label.split(' ')[0]!.toLowerCase()}`, { uploads: UPLOADS, readers: READERS, readerAnswers, unattributed: unattributed.length });
      expect(unattributed).toEqual([]);
    });
  });
}

attributionRace('SQLite', async () => ({ settings: {}, dispose: async () => undefined }));

if (TEST_DATABASE_URL) {
  attributionRace('PostgreSQL', async () => {
    const schema: TestSchema = testSchema();
    return { settings: { catalog: schema.url }, dispose: () => schema.drop() };
  });
} else {
  describe('the uploader of a signed PUT survives readers racing it (PostgreSQL)', () => {
    it.skip(NO_DATABASE, () => undefined);
  });
}
