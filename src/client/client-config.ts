import { resolve } from 'node:path';
import { loadMissionConfig, type MissionConfig } from '../mission/index.js';
import { envPrefix } from './data-dir-paths.js';

/** Flags of the client commands that override the environment (docs/client.md, Configuration). */
export interface ClientSettings {
  readonly url?: string;
  readonly dataDir?: string;
  readonly apiKey?: string;
  readonly missionConfig?: string;
}

export interface ClientConfig {
  readonly mission: MissionConfig;
  readonly url: string;
  /** Absolute path of the local mirror of the archive. */
  readonly dataDir: string;
  readonly apiKey: string | undefined;
}

/** Where `sdc serve` listens by default: the client's default server. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

export class ClientConfigError extends Error {
  override name = 'ClientConfigError';
}

/**
 * The client's settings: flag, else `<MISSION>_DATA_ACCESS_URL` / `_DATA_DIR` / `_API_KEY`
 * (MISSION from SDC_MISSION_CONFIG, `imap` built in), else the default.
 */
export function loadClientConfig(env: NodeJS.ProcessEnv, flags: ClientSettings = {}): ClientConfig {
  const pick = (flag: string | undefined, variable: string): string | undefined => {
    const value = flag ?? env[variable];
    return value === '' ? undefined : value;
  };
  let mission: MissionConfig;
  try {
    mission = loadMissionConfig(pick(flags.missionConfig, 'SDC_MISSION_CONFIG'));
  } catch (err) {
    throw new ClientConfigError((err as Error).message);
  }
  const prefix = envPrefix(mission);
  const url = (pick(flags.url, `${prefix}_DATA_ACCESS_URL`) ?? DEFAULT_URL).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(url)) {
    throw new ClientConfigError(`${prefix}_DATA_ACCESS_URL (or --url) must be an http(s) address such as https://data.example.org, got ${JSON.stringify(url)}`);
  }
  return Object.freeze({
    mission,
    url,
    dataDir: resolve(pick(flags.dataDir, `${prefix}_DATA_DIR`) ?? '.'),
    apiKey: pick(flags.apiKey, `${prefix}_API_KEY`),
  });
}
