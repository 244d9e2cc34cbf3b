import { HAVE_RGW, NO_RGW, startRgw } from './rgw.js';

export interface S3TestServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly bucket: string;
  /** SDC_STORE naming this server's bucket. */
  readonly storeUrl: string;
  stop(): Promise<void>;
}

/** Whether S3 tests can run here; else `S3_SKIPPED` names what is missing. */
export const HAVE_S3 = HAVE_RGW;
export const S3_SKIPPED = NO_RGW;

/**
 * A real S3 server (Ceph RGW, test/helpers/rgw.ts) on a free loopback port with one empty
 * bucket, for tests that need an S3 API but no notifications. It also sets the SDK's
 * default credentials (AWS_ACCESS_KEY_ID/SECRET) in this process, which child processes inherit.
 */
export async function startS3TestServer(bucket = 'sdc-test'): Promise<S3TestServer> {
  const rgw = await startRgw();
  try {
    await rgw.createBucket(bucket);
  } catch (err) {
    await rgw.stop();
    throw err;
  }
  return { endpoint: rgw.endpoint, bucket, storeUrl: rgw.storeUrl(bucket), stop: () => rgw.stop() };
}
