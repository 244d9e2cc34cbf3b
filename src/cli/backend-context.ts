import { pino } from 'pino';
import { loadServerConfig, type ServerSettings } from '../config.js';
import type { ServiceContext } from '../service/index.js';
import { serviceContextFromConfig } from '../service-context-from-config.js';
import { loadSigningSecret, previousSigningSecret, openStore, UrlSigner } from '../store/index.js';
import { checkOperatorTarget } from './operator-target.js';

/** The backend flags shared by the operator commands (`sdc reconcile`, `sdc migrate`). */
export const BACKEND_OPTIONS: readonly [flag: string, description: string][] = [
  ['--home <dir>', 'folder of the embedded store and catalog [SDC_HOME, ./sdc-data]'],
  ['--store <url>', 'object store, file:<dir> or s3://bucket?region=... [SDC_STORE, file:$SDC_HOME/store]'],
  ['--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]'],
  ['--mission-config <file>', 'mission definition JSON [SDC_MISSION_CONFIG, built-in imap]'],
];

/**
 * The service context a server would build from the same variables and flags, for a
 * one-off job, after saying on stderr which catalog and store it is (a missing catalog is
 * refused unless `--create`). Logs go to stderr (warnings and worse), so stdout holds only the result.
 */
export async function openBackendContext(name: string, flags: ServerSettings & { create?: boolean }): Promise<ServiceContext> {
  const config = loadServerConfig(process.env, flags);
  await checkOperatorTarget(name, config, { create: flags.create, withStore: true });
  const log = pino({ level: 'warn' }, pino.destination(2));
  const signer = new UrlSigner(loadSigningSecret(config.signingSecret, config.home), previousSigningSecret(config.signingSecretPrevious));
  const store = await openStore(config.store, { signer, publicUrl: () => config.publicUrl ?? `http://${config.host}:${config.port}`, log });
  // A missing bucket is said by name, with how to create it, before the job begins.
  await store.ping();
  return serviceContextFromConfig(config, store, log);
}
