import type { Command } from 'commander';
import { ClientConfigError, loadClientConfig, type ClientConfig } from '../client-config.js';
import { deviceSignIn } from '../sign-in/device-sign-in.js';
import { loadSignIn, saveSignIn, signInFile } from '../sign-in/sign-in-store.js';
import { signedInToken } from '../sign-in/signed-in-token.js';
import { EXIT } from './run-tally.js';

interface SignInFlags {
  readonly url?: string;
  readonly apiKey?: string;
  readonly missionConfig?: string;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

function configOf(command: Command, flags: SignInFlags): ClientConfig {
  try {
    return loadClientConfig(process.env, flags);
  } catch (err) {
    if (err instanceof ClientConfigError) command.error(`error: ${err.message}`, { exitCode: 2, code: 'sdc.config' });
    throw err;
  }
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<Record<string, string | null>> {
  const res = await fetch(url, { headers: { accept: 'application/json', ...headers } });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${(await res.text()).trim()}`);
  return (await res.json()) as Record<string, string | null>;
}

/** Who the service sees (`GET /auth/whoami`), with the API key if given, else the kept sign-in. */
async function whoami(config: ClientConfig): Promise<Record<string, string | null>> {
  const token = config.apiKey ? undefined : await signedInToken(signInFile(process.env), config.url)();
  const headers: Record<string, string> = config.apiKey ? { 'x-api-key': config.apiKey } : token ? { authorization: `Bearer ${token}` } : {};
  return getJson(`${config.url}/auth/whoami`, headers);
}

function describeCaller(me: Record<string, string | null>): string {
  if (me.name === null) return 'not signed in (no API key, no sdc login for this service)';
  return `${me.name} (${me.role ?? 'no role'}${me.via === 'token' ? `, until ${me.expires_at}` : ', API key'})`;
}

/**
 * `sdc login`, `sdc logout`, `sdc whoami` (docs/client.md, "Signing in"): the device grant
 * against the provider the service names (`GET /auth/config`); tokens kept in the user's
 * config folder (sign-in-store.ts), renewed before they end. An API key still wins when given.
 */
export function registerSignInCommands(program: Command, prefix: string): void {
  const common = (cmd: Command) =>
    cmd
      .option('--url <url>', `address of the data access service [${prefix}_DATA_ACCESS_URL]`)
      .option('--mission-config <file>', 'mission definition JSON [SDC_MISSION_CONFIG, built-in imap]');

  common(program.command('login').description("sign in with the institution's account (device code: open a URL, enter a code)")).action(async (flags: SignInFlags, command: Command) => {
    const config = configOf(command, flags);
    try {
      const where = await getJson(`${config.url}/auth/config`);
      if (!where.issuer || !where.client_id) throw new Error(`${config.url} takes API keys only (no sign-in provider configured): use --api-key or ${prefix}_API_KEY`);
      const signIn = await deviceSignIn({ issuer: where.issuer, clientId: where.client_id }, (url, code, complete) =>
        say(`To sign in, open ${url} and enter the code ${code}${complete ? `\n(or open ${complete})` : ''}\nWaiting for you to approve...`),
      );
      await saveSignIn(signInFile(process.env), config.url, signIn);
      say(`Signed in: ${describeCaller(await whoami({ ...config, apiKey: undefined }))}`);
    } catch (err) {
      say(`sdc login: ${(err as Error).message}`);
      process.exitCode = EXIT.failed;
    }
  });

  common(program.command('logout').description('forget the sign-in kept for the service')).action(async (flags: SignInFlags, command: Command) => {
    const config = configOf(command, flags);
    const file = signInFile(process.env);
    const had = await loadSignIn(file, config.url);
    await saveSignIn(file, config.url, undefined);
    say(had ? `Signed out of ${config.url}.` : `Not signed in to ${config.url}.`);
  });

  common(program.command('whoami').description('who the service sees: name, role and until when'))
    .option('--api-key <key>', `API key [${prefix}_API_KEY]`)
    .action(async (flags: SignInFlags, command: Command) => {
      const config = configOf(command, flags);
      try {
        process.stdout.write(`${describeCaller(await whoami(config))}\n`);
      } catch (err) {
        say(`sdc whoami: ${(err as Error).message}`);
        process.exitCode = EXIT.failed;
      }
    });
}
