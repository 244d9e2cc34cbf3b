import type { Logger } from 'pino';
import { openCatalog } from './catalog/open-catalog.js';
import type { ServerConfig } from './config.js';
import { loadMissionConfig } from './mission/index.js';
import { newIngestActivity, type ServiceContext } from './service/index.js';
import type { ObjectStore } from './store/index.js';

/**
 * The service context the configuration names, around a store the caller opened (the
 * server, the operator commands and Lambda each open theirs their own way). One place
 * for the wiring every entry point shares.
 */
export async function serviceContextFromConfig(config: ServerConfig, store: ObjectStore, log: Logger): Promise<ServiceContext> {
  const catalog = await openCatalog(config.catalog, { onPoolError: (err) => log.error({ err }, 'catalog connection lost') });
  return {
    mission: loadMissionConfig(config.missionConfig),
    catalog,
    store,
    uploadTtl: config.uploadTtl,
    downloadTtl: config.downloadTtl,
    log,
    activity: newIngestActivity(),
  };
}
