import { pino } from 'pino';
import { loadServerConfig } from '../config.js';
import type { ServiceContext } from '../service/index.js';
import { serviceContextFromConfig } from '../service-context-from-config.js';
import { parseS3Url, S3ObjectStore } from '../store/index.js';

/**
 * The service context of a Lambda container, from the same variables as `sdc serve`
 * (SDC_STORE, SDC_CATALOG, SDC_UPLOAD_TTL, ...). Built on the first invocation and
 * kept while the container lives: the pool and the S3 client are reused; nothing in
 * it is state another instance needs.
 */
export async function contextFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ServiceContext> {
  const config = loadServerConfig(env);
  const log = pino({ level: config.logLevel });
  // A Lambda's disk is gone when the container is: files and catalog must live elsewhere.
  if (!config.store.startsWith('s3://')) throw new Error('On AWS Lambda, set SDC_STORE=s3://<bucket>: the local store would vanish with the container.');
  if (!/^postgres(ql)?:\/\//.test(config.catalog)) {
    throw new Error('On AWS Lambda, set SDC_CATALOG=postgres://...: an SQLite file would vanish with the container.');
  }
  const store = new S3ObjectStore(parseS3Url(config.store));
  return serviceContextFromConfig(config, store, log);
}

/** One context per container; a failed start is retried on the next invocation, not cached. */
export function cachedContext(make: () => Promise<ServiceContext>): () => Promise<ServiceContext> {
  let pending: Promise<ServiceContext> | undefined;
  return () => {
    pending ??= make().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
