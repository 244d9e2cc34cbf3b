import type { ServerSettings } from '../../src/config.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from './postgres-test-schema.js';
import { HAVE_RGW, NO_RGW, startRgw, type RgwServer } from './rgw.js';
import { notifyBucket } from './rgw-topics.js';

/** The production backends for a test: a real S3 server (Ceph RGW) with one bucket, and one PostgreSQL schema. */
export interface ProductionBackends {
  readonly rgw: RgwServer;
  readonly bucket: string;
  readonly schema: TestSchema;
  /** SDC_STORE and SDC_CATALOG naming them. */
  readonly settings: Pick<ServerSettings, 'store' | 'catalog'>;
  /**
   * Makes the bucket announce each created object to `serviceUrl`'s POST /events/s3, as an
   * operator configures it: an SNS-style topic whose push-endpoint carries the token in its URL.
   */
  notify(serviceUrl: string, token: string): Promise<void>;
  stop(): Promise<void>;
}

export const HAVE_PRODUCTION_BACKENDS = Boolean(TEST_DATABASE_URL) && HAVE_RGW;
export const PRODUCTION_BACKENDS_LABEL = !TEST_DATABASE_URL
  ? `S3 + PostgreSQL: ${NO_DATABASE}`
  : HAVE_RGW
    ? 'S3 (radosgw) + PostgreSQL'
    : `S3 + PostgreSQL: ${NO_RGW}`;

export async function startProductionBackends(): Promise<ProductionBackends> {
  const rgw = await startRgw();
  const bucket = await rgw.createBucket();
  const schema = testSchema();
  return {
    rgw,
    bucket,
    schema,
    settings: { store: rgw.storeUrl(bucket), catalog: schema.url },
    async notify(serviceUrl, token) {
      await notifyBucket(rgw.endpoint, rgw.client, bucket, `${serviceUrl}/events/s3?token=${encodeURIComponent(token)}`);
    },
    async stop() {
      await rgw.stop();
      await schema.drop();
    },
  };
}
