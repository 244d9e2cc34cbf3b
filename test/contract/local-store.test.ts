import { expect, it } from 'vitest';
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
  },
);
