import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';

export interface S3TestServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly bucket: string;
  /** SDC_STORE naming this server's bucket. */
  readonly storeUrl: string;
  readonly server: S3rver;
  stop(): Promise<void>;
}

/**
 * An S3-compatible server (s3rver) on a loopback port chosen by the OS, with one
 * empty bucket, in a temporary folder. It answers presigned PUT/GET/HEAD/List like
 * S3 but checks no SigV4 signature and ignores If-None-Match on PUT. The S3 guarantees
 * are tested on a real S3 server (test/helpers/rgw.ts); this remains for tests that need
 * only an S3 API and run where radosgw is not installed.
 */
export async function startS3TestServer(bucket = 'sdc-test'): Promise<S3TestServer> {
  // The SDK's default provider chain reads these; s3rver's account is S3RVER/S3RVER.
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  const directory = await mkdtemp(join(tmpdir(), 'sdc-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    storeUrl: `s3://${bucket}?endpoint=${encodeURIComponent(endpoint)}&region=us-east-1&forcePathStyle=true`,
    server,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
