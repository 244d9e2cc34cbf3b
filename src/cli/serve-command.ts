import { createServer } from 'node:net';
import type { Command } from 'commander';
import { loadServerConfig, type ServerConfig, type ServerSettings } from '../config.js';
import { startServer } from '../server.js';

/** A port the server cannot listen on, said with what to do about it (exit 1). */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError';
}

/** The message for a listen failure, with the hint that fits its code; undefined for others. */
export function listenProblem(err: NodeJS.ErrnoException, config: Pick<ServerConfig, 'host' | 'port'>): string | undefined {
  const where = `port ${config.port} on ${config.host}`;
  if (err.code === 'EADDRINUSE') {
    return `sdc serve: ${where} is already in use (another sdc serve?). Stop the process that holds it, or choose another port with --port <n> or PORT.`;
  }
  if (err.code === 'EACCES') return `sdc serve: not allowed to listen on ${where} (ports below 1024 need privileges). Choose a port above 1023 with --port <n> or PORT.`;
  if (err.code === 'EADDRNOTAVAIL') return `sdc serve: ${config.host} is not an address of this machine. Use --host 127.0.0.1, 0.0.0.0 or one of its addresses.`;
  return undefined;
}

/**
 * Listens on the configured port and lets it go again: a port that is taken is reported
 * before the start-up work (temporary files, reconcile) rather than after it.
 */
async function checkPort(config: ServerConfig): Promise<void> {
  if (config.port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) => {
      const problem = listenProblem(err, config);
      reject(problem ? new PortUnavailableError(problem) : err);
    });
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** `sdc serve`: the service on the configured backends (embedded default: local files + SQLite). */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the data access API (embedded default: local store + SQLite under SDC_HOME)')
    .option('--port <port>', 'port to listen on [PORT, 8080]')
    .option('--host <host>', 'address to listen on [HOST, 127.0.0.1]')
    .option('--home <dir>', 'folder of the embedded store and catalog [SDC_HOME, ./sdc-data]')
    .option('--public-url <url>', 'base of signed addresses [SDC_PUBLIC_URL, http://HOST:PORT]')
    .option('--store <url>', 'object store, file:<dir> or s3://bucket?region=... [SDC_STORE, file:$SDC_HOME/store]')
    .option('--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]')
    .option('--upload-ttl <seconds>', 'lifetime of upload addresses [SDC_UPLOAD_TTL, 3600]')
    .option('--download-ttl <seconds>', 'lifetime of download addresses [SDC_DOWNLOAD_TTL, 86400]')
    .option('--signing-secret <secret>', 'key of signed addresses [SDC_SIGNING_SECRET, generated into SDC_HOME]')
    .option('--mission-config <file>', 'mission definition JSON [SDC_MISSION_CONFIG, built-in imap]')
    .option('--cors-origin <origins>', 'origins allowed by CORS, * or a comma-separated list [SDC_CORS_ORIGIN, *]')
    .option('--events-token <secret>', 'Bearer token of POST /events/s3 [SDC_EVENTS_TOKEN, unset = disabled]')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent [SDC_LOG_LEVEL, info]')
    .option('--require-keys <bool>', 'uploads need an API key even before one exists [SDC_REQUIRE_KEYS, false on the embedded backends, true on S3 or PostgreSQL]')
    .option('--read-needs-key <bool>', 'query and download need an API key too [SDC_READ_NEEDS_KEY, false]')
    .option('--max-object-size <bytes>', 'largest file a PUT may store [SDC_MAX_OBJECT_SIZE, 5368709120]')
    .option('--min-free <size>', 'free space under which the local store refuses new uploads (507), e.g. 5% or 20GiB, 0 = off [SDC_MIN_FREE, 5%]')
    .option('--request-timeout <seconds>', 'longest time to receive a whole request [SDC_REQUEST_TIMEOUT, 3600]')
    .option('--idle-timeout <seconds>', 'longest a connection may stay silent [SDC_IDLE_TIMEOUT, 30]')
    .option('--rate-limit <n>', 'requests per minute per API key or address, 0 = off [SDC_RATE_LIMIT, 1200]')
    .option('--sweep-interval <seconds>', 'seconds between sweeps for uploads not yet indexed, 0 = at start only [SDC_SWEEP_INTERVAL, 5]')
    .option('--shutdown-grace <seconds>', 'how long SIGTERM waits for in-flight requests [SDC_SHUTDOWN_GRACE, 30]')
    .option('--trusted-proxies <list>', 'addresses/CIDRs of reverse proxies whose X-Forwarded-For is believed [SDC_TRUSTED_PROXIES, none]')
    .option('--oidc-issuer <url>', 'issuer of the OpenID Connect provider whose Bearer tokens are accepted [SDC_OIDC_ISSUER, unset = API keys only]')
    .option('--oidc-audience <aud>', 'aud a token for this archive carries [SDC_OIDC_AUDIENCE, required with the issuer]')
    .option('--oidc-roles-claim <path>', 'claim holding groups or roles, dotted for nested [SDC_OIDC_ROLES_CLAIM, groups]')
    .option('--oidc-roles <json>', 'role -> claim values granting it, e.g. {"curator":["sdc-curators"]} [SDC_OIDC_ROLES, {}]')
    .option('--oidc-name-claim <claim>', 'claim naming the caller [SDC_OIDC_NAME_CLAIM, preferred_username, else sub]')
    .option('--oidc-client-id <id>', 'public client of the portal and of sdc login [SDC_OIDC_CLIENT_ID]')
    .action(async (flags: ServerSettings) => {
      const config = loadServerConfig(process.env, flags);
      await checkPort(config);
      const server = await startServer(config).catch((err: NodeJS.ErrnoException) => {
        // Taken in the moment between the check and the server's own listen.
        const problem = listenProblem(err, config);
        throw problem ? new PortUnavailableError(problem) : err;
      });
      const stop = (signal: string) => {
        server.app.log.info({ signal }, 'shutting down');
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
