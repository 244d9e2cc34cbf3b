#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerSeedCommand } from './seed-command.js';
import { registerKeysCommand } from './keys-command.js';
import { registerMigrateCommand } from './migrate-command.js';
import { registerReconcileCommand } from './reconcile-command.js';
import { registerServeCommand } from './serve-command.js';
import { registerBackupCommands } from './backup-command.js';
import { NoCatalogError } from './operator-target.js';
import { PortUnavailableError } from './serve-command.js';
import { registerClientCommands } from '../client/cli/register-client-commands.js';

/** The package's version: package.json sits two folders up from src/cli and from dist/cli. */
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** `sdc`: one command, a subcommand per job. */
const program = new Command('sdc')
  .description('science data centre file access: serve the API, or query, upload and download files')
  .version(version, '-V, --version', 'print the version of sdc')
  // `sdc --version` is the program's; `sdc query --version v00-01` stays the filter of query.
  .enablePositionalOptions()
  // After a usage error, one pointer to the help rather than the whole help.
  .showHelpAfterError("(run 'sdc --help' or 'sdc <command> --help' for usage)")
  .exitOverride();

registerServeCommand(program);
registerClientCommands(program);
registerSeedCommand(program);
registerKeysCommand(program);
registerReconcileCommand(program);
registerMigrateCommand(program);
registerBackupCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  if (err instanceof NoCatalogError) {
    console.error(err.message);
    process.exit(2);
  }
  if (err instanceof PortUnavailableError) {
    console.error(err.message);
    process.exit(1);
  }
  console.error(`sdc: ${(err as Error).message}`);
  process.exit(1);
}
