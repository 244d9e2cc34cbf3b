import { InvalidArgumentError, type Command } from 'commander';
import { Client } from '../client.js';
import type { EngineKind } from '../http-engine.js';
import { ClientConfigError, DEFAULT_URL, loadClientConfig, type ClientConfig, type ClientSettings } from '../client-config.js';
import { envPrefix } from '../data-dir-paths.js';
import { loadMissionConfig } from '../../mission/index.js';
import { describe, setServiceAddress } from './run-tally.js';
import { signInFile } from '../sign-in/sign-in-store.js';
import { signedInToken } from '../sign-in/signed-in-token.js';

/** Flags every client command takes. */
export interface ClientFlags extends ClientSettings {
  readonly retries: number;
  readonly timeout: number;
  readonly quiet?: boolean;
}

/**
 * The variable prefix to show in help: the configured mission's when SDC_MISSION_CONFIG
 * names a readable one, else `IMAP`. Help must print even when that file is broken.
 */
export function helpPrefix(env: NodeJS.ProcessEnv): string {
  try {
    return envPrefix(loadMissionConfig(env.SDC_MISSION_CONFIG || undefined));
  } catch {
    return '<MISSION>';
  }
}

/** Commander parser for a whole number in [min, max]; a bad value is a usage error (exit 2). */
export function wholeNumber(min: number, max: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };
}

export function addConnectionOptions(cmd: Command, prefix: string, { dataDir }: { dataDir: boolean }): Command {
  cmd.option('--url <url>', `address of the data access service [${prefix}_DATA_ACCESS_URL, ${DEFAULT_URL}]`);
  if (dataDir) cmd.option('--data-dir <dir>', `local mirror of the archive [${prefix}_DATA_DIR, the current directory]`);
  return cmd
    .option('--api-key <key>', `API key, sent as X-API-Key [${prefix}_API_KEY]`)
    .option('--mission-config <file>', 'mission definition JSON [SDC_MISSION_CONFIG, built-in imap]')
    .option('--retries <n>', 'retries after a network error or 5xx, with backoff; 4xx is never retried', wholeNumber(0, 20), 4)
    .option('--timeout <seconds>', 'longest silence from the server before giving up on an attempt', wholeNumber(1, 3600), 60)
    .option('-q, --quiet', 'no progress bars, no summary unless something failed');
}

/** Configuration and an SDK client; a bad setting is a usage error (exit 2). */
export function openClient(
  cmd: Command,
  flags: ClientFlags,
  onMessage: (line: string) => void,
  { failFast = true, engine }: { failFast?: boolean; engine?: EngineKind } = {},
): { config: ClientConfig; client: Client } {
  let config: ClientConfig;
  try {
    config = loadClientConfig(process.env, flags);
  } catch (err) {
    if (err instanceof ClientConfigError) cmd.error(`error: ${err.message}`, { exitCode: 2, code: 'sdc.config' });
    throw err;
  }
  setServiceAddress(config.url, `${envPrefix(config.mission)}_DATA_ACCESS_URL`);
  const client = new Client({
    url: config.url,
    apiKey: config.apiKey,
    // Without a key, the token of `sdc login` for this service, if any (docs/client.md, "Signing in").
    ...(config.apiKey ? {} : { bearer: signedInToken(signInFile(process.env), config.url) }),
    mission: config.mission,
    retry: { retries: flags.retries },
    idleTimeoutMs: flags.timeout * 1000,
    failFast,
    engine,
    // Said even with --quiet: a run that slows down for a minute must say why.
    onPause: (waitMs, reason) => onMessage(`sdc ${cmd.name()}: ${reason}; all requests wait ${Math.ceil(waitMs / 1000)} s, then go on`),
    onRetry: flags.quiet
      ? undefined
      : (err, attempt, delayMs) =>
          onMessage(`sdc ${cmd.name()}: ${describe(err, false)}; retry ${attempt} of ${flags.retries} in ${(delayMs / 1000).toFixed(1)} s`),
  });
  return { config, client };
}
