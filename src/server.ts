import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ServerConfig } from './config.js';
import { buildApp, type AppOptions } from './http/app.js';
import { createLogger } from './logger.js';
import { startIngestSweeper, startReleasePublisher, type ServiceContext } from './service/index.js';
import { serviceContextFromConfig } from './service-context-from-config.js';
import { requestTracingFromEnv } from './tracing/request-tracing.js';
import { isMissingBucketError, LocalObjectStore, loadSigningSecret, previousSigningSecret, openStore, UrlSigner } from './store/index.js';

/** How long start-up waits for the store's first answer before listening without it. */
const STORE_PING_AT_START_MS = 3_000;

export interface RunningServer {
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  readonly app: FastifyInstance;
  readonly ctx: ServiceContext;
  close(): Promise<void>;
}

/**
 * Wires the adapters named by the configuration to the service, clears what a crash left in
 * the local store (temporary files), listens, then indexes in the background what a crash or
 * a lost notification left unindexed. `build` is for tests (a feed with smaller caps).
 */
export async function startServer(config: ServerConfig, log: Logger = createLogger(config.logLevel), build: Pick<AppOptions, 'feed'> = {}): Promise<RunningServer> {
  const signer = new UrlSigner(loadSigningSecret(config.signingSecret, config.home), previousSigningSecret(config.signingSecretPrevious));
  let listeningUrl = `http://${config.host}:${config.port}`;
  const store = await openStore(config.store, { signer, publicUrl: () => config.publicUrl ?? listeningUrl, maxObjectSize: config.maxObjectSize, minFree: config.minFree, log });
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; the request handlers see the traced ports.
  const tracing = await requestTracingFromEnv();
  const untraced = await serviceContextFromConfig(config, store, log);
  const ctx = tracing ? tracing.traced(untraced) : untraced;
  const { catalog } = untraced;

  // The store answers before anything else is done: a missing bucket is said by name, with how
  // to create it. A store that cannot be reached at all is an outage, not a mistake: the instance
  // starts anyway and answers queries (docs/reliability.md, faults), and uploads get 503 until it is back.
  // A store that does not answer at all (black-holed) is waited for only so long: listening
  // must not hang on it. Its late answer, if any, is only logged.
  const pinged = store.ping().then(
    () => undefined,
    (err: unknown) => err,
  );
  let waited: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (waited = setTimeout(() => resolve('late'), STORE_PING_AT_START_MS)));
  const pingError = await Promise.race([pinged, late]).finally(() => clearTimeout(waited));
  if (isMissingBucketError(pingError)) {
    await catalog.close();
    throw pingError;
  }
  if (pingError === 'late') {
    log.warn({ waitedMs: STORE_PING_AT_START_MS }, 'the object store did not answer at start; serving what does not need it');
    void pinged.then((err) => isMissingBucketError(err) && log.error({ err }, 'the object store answered late: its bucket is missing'));
  } else if (pingError !== undefined) {
    log.warn({ err: pingError }, 'the object store did not answer at start; serving what does not need it');
  }
  const left = await store.recover?.();
  if (left?.temporaryFiles) log.warn({ removed: left.temporaryFiles }, 'removed temporary files left by an interrupted upload');
  if (left?.expiredUploads) log.warn({ expired: left.expiredUploads }, 'removed uploads in parts left open past their lifetime');

  const app = await buildApp({
    ctx,
    // The local store serves its own signed addresses (/store/...); other stores sign theirs.
    ...(ctx.store instanceof LocalObjectStore ? { signedAddresses: { store: ctx.store, signer } } : {}),
    logger: log,
    corsOrigin: config.corsOrigin,
    trust: { ...config, keys: catalog.keys() },
    eventsToken: config.eventsToken,
    trustedProxies: config.trustedProxies,
    ...(config.eventsTokenPrevious === undefined ? {} : { eventsTokenPrevious: config.eventsTokenPrevious }),
    publicUrl: config.publicUrl,
    tracing,
    // Tests only: the live feed with smaller caps (feed-route.ts); `sdc serve` passes nothing.
    ...build,
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await catalog.close();
    throw err;
  }
  // Listening first, repairing after: objects a crash left without records, and uploads whose
  // notification never came, are indexed in the background (service/ingest-sweep.ts), so a
  // restart after SIGKILL never waits out the leases the dead process held. Records without
  // objects are `sdc reconcile`'s job.
  const sweeper = startIngestSweeper(ctx, config.sweepInterval * 1000);
  // Files whose release date comes get their 'released' change logged (docs/api.md "Releases").
  const publisher = startReleasePublisher(ctx);
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
      await sweeper.stop();
      await publisher.stop();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
      }
      // Uploads cut by the forced close are still removing their temporary files.
      await store.settled?.();
      await catalog.close();
      await tracing?.shutdown();
    },
  };
}
