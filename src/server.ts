import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ServerConfig } from './config.js';
import { buildApp } from './http/app.js';
import { createLogger } from './logger.js';
import { reconcile, type ServiceContext } from './service/index.js';
import { serviceContextFromConfig } from './service-context-from-config.js';
import { LocalObjectStore, loadSigningSecret, openStore, UrlSigner } from './store/index.js';

export interface RunningServer {
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly ctx: ServiceContext;
  close(): Promise<void>;
}

/**
 * Wires the adapters named by the configuration to the service, repairs what a crash
 * may have left (temporary files, unindexed objects), and listens.
 */
export async function startServer(config: ServerConfig, log: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const signer = new UrlSigner(loadSigningSecret(config.signingSecret, config.home));
  let listeningUrl = `http://${config.host}:${config.port}`;
  const store = openStore(config.store, { signer, publicUrl: () => config.publicUrl ?? listeningUrl, maxObjectSize: config.maxObjectSize });
  const ctx = await serviceContextFromConfig(config, store, log);
  const { catalog } = ctx;

  const left = await store.recover?.();
  if (left?.temporaryFiles) log.warn({ removed: left.temporaryFiles }, 'removed temporary files left by an interrupted upload');
  if (left?.expiredUploads) log.warn({ expired: left.expiredUploads }, 'removed uploads in parts left open past their lifetime');
  // Objects a crash left without records get them now; records without objects are `sdc reconcile`'s job.
  const report = await reconcile(ctx, { checkRecords: false });
  log.info({ indexed: report.indexed, skipped: report.skipped }, 'indexed objects that had no record');

  const app = await buildApp({
    ctx,
    // The local store serves its own signed addresses (/store/...); other stores sign theirs.
    ...(store instanceof LocalObjectStore ? { signedAddresses: { store, signer } } : {}),
    logger: log,
    corsOrigin: config.corsOrigin,
    trust: { ...config, keys: catalog.keys() },
    eventsToken: config.eventsToken,
    publicUrl: config.publicUrl,
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await catalog.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  listeningUrl = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;

  return {
    url: listeningUrl,
    app,
    ctx,
    /**
     * Graceful: stop accepting, let in-flight requests finish; after
     * `shutdownGrace` seconds, close the connections still open (an upload cut
     * there leaves no file: its temporary file goes, see LocalObjectStore.write).
     */
    async close() {
      const force = setTimeout(() => app.server.closeAllConnections(), config.shutdownGrace * 1000);
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
      // Uploads cut by the forced close are still removing their temporary files.
      await store.settled?.();
      await catalog.close();
    },
  };
}
