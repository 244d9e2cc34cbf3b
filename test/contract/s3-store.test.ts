import { expect, it } from 'vitest';
import { parseS3Url, S3ObjectStore } from '../../src/store/index.js';
import { startS3TestServer } from '../helpers/s3-test-server.js';
import { testStore } from './store-contract.js';

const signedHeaders = (address: string) => new URL(address).searchParams.get('X-Amz-SignedHeaders')?.split(';') ?? [];

// S3 over HTTP through s3rver. It checks no signature and ignores If-None-Match, so the
// no-overwrite guarantee is tested here only as far as what the addresses carry.
testStore(
  's3 (s3rver)',
  async () => {
    const s3 = await startS3TestServer();
    const store = new S3ObjectStore(parseS3Url(s3.storeUrl));
    return {
      store,
      async dispose() {
        store.close();
        await s3.stop();
      },
    };
  },
  (store) => {
    it('signs If-None-Match: * into upload addresses and adds no checksum parameters', async () => {
      const address = await store().presignPut('imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf', 60);
      expect(signedHeaders(address)).toContain('if-none-match');
      expect(signedHeaders(address)).not.toContain('content-type');
      expect(address).not.toMatch(/checksum/i);
      expect(new URL(address).searchParams.get('X-Amz-Expires')).toBe('60');
    });
  },
);

it('leaves If-None-Match out of upload addresses when conditionalPut=optional', async () => {
  const store = new S3ObjectStore(parseS3Url('s3://some-bucket?region=eu-west-1&conditionalPut=optional'));
  const address = await store.presignPut('imap/mag/l1a/2024/01/imap_mag_l1a_norm_20240105_20240105_v00-01.cdf', 3600);
  expect(signedHeaders(address)).toEqual(['host']);
  expect(address).toMatch(/^https:\/\/some-bucket\.s3\.eu-west-1\.amazonaws\.com\/imap\/mag\//);
  store.close();
});
