import type { Command } from 'commander';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { startServer } from '../server.js';

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
    .option('--require-keys <bool>', 'uploads need an API key even before one exists [SDC_REQUIRE_KEYS, false]')
    .option('--read-needs-key <bool>', 'query and download need an API key too [SDC_READ_NEEDS_KEY, false]')
    .option('--max-object-size <bytes>', 'largest file a PUT may store [SDC_MAX_OBJECT_SIZE, 5368709120]')
    .option('--request-timeout <seconds>', 'longest time to receive a whole request [SDC_REQUEST_TIMEOUT, 3600]')
    .option('--idle-timeout <seconds>', 'longest a connection may stay silent [SDC_IDLE_TIMEOUT, 30]')
    .option('--rate-limit <n>', 'requests per minute per API key or address, 0 = off [SDC_RATE_LIMIT, 1200]')
    .option('--shutdown-grace <seconds>', 'how long SIGTERM waits for in-flight requests [SDC_SHUTDOWN_GRACE, 30]')
    .action(async (flags: ServerSettings) => {
      const config = loadServerConfig(process.env, flags);
      const server = await startServer(config);
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
