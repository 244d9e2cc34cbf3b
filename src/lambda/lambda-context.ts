import { pino, type Logger } from 'pino';
import { loadServerConfig, type ServerConfig } from '../config.js';
import type { ServiceContext } from '../service/index.js';
import { serviceContextFromConfig } from '../service-context-from-config.js';
import { parseS3Url } from '../store/index.js';
import { S3ObjectStore } from '../store/s3/s3-object-store.js';
import { withDatabaseSecret } from './database-secret.js';

/** What a Lambda container builds once: the configuration and the service context on it. */
export interface LambdaSetup {
  readonly config: ServerConfig;
  readonly ctx: ServiceContext;
  readonly log: Logger;
}

/**
 * The configuration and service context of a Lambda container, from the same variables
 * as `sdc serve` (SDC_STORE, SDC_CATALOG, SDC_UPLOAD_TTL, SDC_REQUIRE_KEYS, ...). Built on
 * the first invocation and kept while the container lives: the pool and the S3 client
 * are reused; nothing in it is state another instance needs.
 */
export async function setupFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<LambdaSetup> {
  // The database password, fetched now from Secrets Manager rather than kept in the environment.
  const config = loadServerConfig(await withDatabaseSecret(env));
  const log = pino({ level: config.logLevel });
  // A Lambda's disk is gone when the container is: files and catalog must live elsewhere.
  if (!config.store.startsWith('s3://')) throw new Error('On AWS Lambda, set SDC_STORE=s3://<bucket>: the local store would vanish with the container.');
  if (!/^postgres(ql)?:\/\//.test(config.catalog)) {
    throw new Error('On AWS Lambda, set SDC_CATALOG=postgres://...: an SQLite file would vanish with the container.');
  }
  const store = new S3ObjectStore(parseS3Url(config.store), log);
  return { config, ctx: await serviceContextFromConfig(config, store, log), log };
}

/** The service context alone (the ingest and reconcile functions need no more). */
export async function contextFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ServiceContext> {
  return (await setupFromEnvironment(env)).ctx;
}

/** One value per container; a failed start is retried on the next invocation, not cached. */
export function cachedContext<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= make().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
