import type { ServerSettings } from '../../src/config.js';
import { NO_DATABASE, TEST_DATABASE_URL, testSchema, type TestSchema } from './postgres-test-schema.js';
import { startS3TestServer, type S3TestServer } from './s3-test-server.js';

/** The production backends for a test: one S3-compatible server and one PostgreSQL schema. */
export interface ProductionBackends {
  readonly s3: S3TestServer;
  readonly schema: TestSchema;
  /** SDC_STORE and SDC_CATALOG naming them. */
  readonly settings: Pick<ServerSettings, 'store' | 'catalog'>;
  stop(): Promise<void>;
}

export const HAVE_DATABASE = Boolean(TEST_DATABASE_URL);
export const PRODUCTION_BACKENDS_LABEL = HAVE_DATABASE ? 'S3 (s3rver) + PostgreSQL' : `S3 + PostgreSQL: ${NO_DATABASE}`;

export async function startProductionBackends(): Promise<ProductionBackends> {
  const s3 = await startS3TestServer();
  const schema = testSchema();
  return {
    s3,
    schema,
    settings: { store: s3.storeUrl, catalog: schema.url },
    async stop() {
      await s3.stop();
      await schema.drop();
    },
  };
}
