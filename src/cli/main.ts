#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { Command, CommanderError } from 'commander';

/** The package's version: package.json sits two folders up from src/cli and from dist/cli. */
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * Each command's module, loaded only when that command runs: `sdc query` must not pay for
 * the server's code (Fastify, the catalogs, the AWS SDK), nor `sdc --version` for anything.
 * The order is the order of `sdc --help`. See docs/performance.md ("CLI start-up").
 */
const signInCommands = async (p: Command): Promise<void> => (await import('../client/cli/login-command.js')).registerSignInCommands(p, await clientPrefix());
const backupCommands = async (p: Command): Promise<void> => (await import('./backup-command.js')).registerBackupCommands(p);

const COMMANDS: Readonly<Record<string, (program: Command) => Promise<void>>> = {
  serve: async (p) => (await import('./serve-command.js')).registerServeCommand(p),
  query: async (p) => (await import('../client/cli/query-command.js')).registerQueryCommand(p, await clientPrefix()),
  upload: async (p) => (await import('../client/cli/upload-command.js')).registerUploadCommand(p, await clientPrefix()),
  download: async (p) => (await import('../client/cli/download-command.js')).registerDownloadCommand(p, await clientPrefix()),
  watch: async (p) => (await import('../client/cli/watch-command.js')).registerWatchCommand(p, await clientPrefix()),
  withdraw: async (p) => (await import('../client/cli/withdraw-command.js')).registerWithdrawCommand(p, await clientPrefix()),
  release: async (p) => (await import('../client/cli/release-command.js')).registerReleaseCommand(p, await clientPrefix()),
  // One module registers the three.
  login: signInCommands,
  logout: signInCommands,
  whoami: signInCommands,
  seed: async (p) => (await import('./seed-command.js')).registerSeedCommand(p),
  keys: async (p) => (await import('./keys-command.js')).registerKeysCommand(p),
  reconcile: async (p) => (await import('./reconcile-command.js')).registerReconcileCommand(p),
  audit: async (p) => (await import('./audit-command.js')).registerAuditCommand(p),
  purge: async (p) => (await import('./purge-command.js')).registerPurgeCommand(p),
  migrate: async (p) => (await import('./migrate-command.js')).registerMigrateCommand(p),
  // One module registers both.
  backup: backupCommands,
  restore: backupCommands,
};

async function clientPrefix(): Promise<string> {
  return (await import('../client/cli/client-options.js')).helpPrefix(process.env);
}

/** `sdc`: one command, a subcommand per job. */
const program = new Command('sdc')
  .description('science data centre file access: serve the API, or query, upload and download files')
  .version(version, '-V, --version', 'print the version of sdc')
  // `sdc --version` is the program's; `sdc query --version v00-01` stays the filter of query.
  .enablePositionalOptions()
  // After a usage error, one pointer to the help rather than the whole help.
  .showHelpAfterError("(run 'sdc --help' or 'sdc <command> --help' for usage)")
  .exitOverride();

// The program's own options come before the command's name (enablePositionalOptions), so the
// first argument is the command, or a program option such as --version or --help.
const named = process.argv[2];
if (named === 'query' || named === 'upload' || named === 'download' || named === 'watch' || named === 'withdraw' || named === 'release') {
  // The client's HTTP parser (undici's llhttp) is WebAssembly: V8 would optimise it on a
  // background thread that the process then waits for at exit, ~0.8 s on the test machine for
  // a one-page `sdc query`. The baseline compiler alone parses headers fast enough for a client;
  // the figures are in docs/performance.md ("CLI start-up").
  setFlagsFromString('--liftoff-only');
}
try {
  if (named !== undefined && Object.hasOwn(COMMANDS, named)) await COMMANDS[named]!(program);
  else if (named !== '-V' && named !== '--version') {
    // Help, `sdc help <command>`, or a command mistyped: every command, so help and suggestions are whole.
    for (const register of new Set(Object.values(COMMANDS))) await register(program);
    (await import('../client/cli/register-client-commands.js')).addClientHelp(program, await clientPrefix());
  }
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  // Both said in their own words: a missing catalog is a usage error, a taken port a failure.
  if ((err as Error).name === 'NoCatalogError') {
    console.error((err as Error).message);
    process.exit(2);
  }
  if ((err as Error).name === 'PortUnavailableError') {
    console.error((err as Error).message);
    process.exit(1);
  }
  // Loaded only on failure: `sdc --version` pays for nothing (docs/performance.md).
  const { failureMessage } = await import('./failure-message.js');
  console.error(`sdc: ${failureMessage(err)}`);
  process.exit(1);
}
