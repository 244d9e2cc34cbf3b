import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { ServerError } from '../../src/errors/index.js';
import type { LocalObjectStore } from '../../src/store/local/local-object-store.js';
import { startTestServer } from '../helpers/test-server.js';
import { putBytes, testStore } from './store-contract.js';

// The local store's addresses are served by the real server's /store routes.
testStore(
  'local',
  async () => {
    const server = await startTestServer();
    return { store: server.ctx.store, dispose: () => server.stop() };
  },
  (store) => {
    it('refuses a second PUT of a key (409) and keeps the first bytes', async () => {
      const k = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf';
      const address = await store().presignPut(k, 60);
      expect((await putBytes(address, Buffer.from('first'))).status).toBe(200);
      expect((await putBytes(address, Buffer.from('second'))).status).toBe(409);
      expect((await store().digest(k)).size).toBe(5);
    });

    it('refuses an address whose key or signature was changed (403)', async () => {
      const k = 'imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240106_20240106_v00-01.cdf';
      const address = await store().presignPut(k, 60);
      expect((await putBytes(address.replace('20240106_2024', '20240107_2024'), Buffer.from('x'))).status).toBe(403);
      // Change the signature's first digit to another one.
      const forged = address.replace(/signature=(.)/, (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`);
      expect((await putBytes(forged, Buffer.from('x'))).status).toBe(403);
    });

    it('reports a disk failure while writing as SDC_BACKEND_FAILED, the disk error its cause', async () => {
      const local = store() as LocalObjectStore;
      const k = 'imap/mag/l1a/2023/12/imap_mag_l1a_norm_20231208_20231208_v00-01.cdf';
      // A file where the key's folder belongs: the write's mkdir fails (a disk error, not the client's).
      const folder = dirname(local.fileOf(k));
      await mkdir(dirname(folder), { recursive: true });
      await writeFile(folder, 'not a folder');
      const failure = await local.write(k, Readable.from([Buffer.from('bytes')])).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ServerError);
      expect(failure).toMatchObject({ code: 'SDC_BACKEND_FAILED', statusCode: 500, message: `Local store: write ${k} failed` });
      expect((failure as ServerError).cause).toMatchObject({ code: expect.stringMatching(/^E(EXIST|NOTDIR)$/) });
      // Over HTTP a 500 is answered as SDC_INTERNAL, its details left to the log (http/error-answer.ts).
      const answer = await putBytes(await store().presignPut(k, 60), Buffer.from('bytes'));
      expect(answer.status).toBe(500);
      expect(answer.headers.get('X-Error-Code')).toBe('SDC_INTERNAL');
    });
  },
);
