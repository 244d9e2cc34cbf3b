import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { ServerError } from '../../src/errors/index.js';
import type { LocalObjectStore } from '../../src/store/local/local-object-store.js';
import { notesRootOf } from '../../src/store/local/object-note.js';
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

    it('stores a file whose name has the longest length allowed (255 characters), its note with it', async () => {
      const name = `imap_mag_l1a_${'d'.repeat(255 - 'imap_mag_l1a__20240105_20240105_v00-01.cdf'.length)}_20240105_20240105_v00-01.cdf`;
      expect(name).toHaveLength(255);
      const k = `imap/mag/l1a/2024/01/${name}`;
      expect((await putBytes(await store().presignPut(k, 60, 'pipeline'), Buffer.from('long name'))).status).toBe(200);
      expect(await store().digest(k)).toMatchObject({ size: 9, uploader: 'pipeline', ingestionDate: expect.stringMatching(/^\d{4}-/) });
    });

    it('keeps the note of an upload in parts, as of a single PUT: a rebuild from the store keeps its uploader and ingestion date', async () => {
      const local = store() as LocalObjectStore;
      const k = 'imap/mag/l1a/2024/02/imap_mag_l1a_norm_20240201_20240201_v00-01.cdf';
      const uploadId = await local.multipart.create(k, 'pipeline');
      const etag = await local.multipart.writePart(k, uploadId, 1, Readable.from([Buffer.from('one part')]));
      const done = await local.multipart.complete(k, uploadId, [{ partNumber: 1, etag }]);
      expect(done).toMatchObject({ outcome: 'stored', digest: { uploader: 'pipeline', ingestionDate: expect.stringMatching(/^\d{4}-/) } });
      const { ingestionDate } = (done as { digest: { ingestionDate: string } }).digest;
      expect(await local.digest(k)).toMatchObject({ size: 8, uploader: 'pipeline', ingestionDate });
    });

    it('still reads a note kept where earlier versions kept it (<key>.json)', async () => {
      const local = store() as LocalObjectStore;
      const k = 'imap/mag/l1a/2024/03/imap_mag_l1a_norm_20240301_20240301_v00-01.cdf';
      const bytes = Buffer.from('written by an earlier version');
      await mkdir(dirname(local.fileOf(k)), { recursive: true });
      await writeFile(local.fileOf(k), bytes);
      const note = join(notesRootOf(local.root), `${k}.json`);
      await mkdir(dirname(note), { recursive: true });
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await writeFile(note, JSON.stringify({ uploader: 'old-pipeline', ingestion_date: '2025-01-02T03:04:05.678Z', size: bytes.length, sha256 }));
      expect(await local.digest(k)).toMatchObject({ uploader: 'old-pipeline', ingestionDate: '2025-01-02T03:04:05.678Z' });
      await local.remove(k);
      expect(await readdir(dirname(note))).toEqual([]);
    });
  },
);
