#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerSeedCommand } from './seed-command.js';
import { registerKeysCommand } from './keys-command.js';
import { registerMigrateCommand } from './migrate-command.js';
import { registerReconcileCommand } from './reconcile-command.js';
import { registerServeCommand } from './serve-command.js';
import { registerClientCommands } from '../client/cli/register-client-commands.js';

/** `sdc`: one command, a subcommand per job. */
const program = new Command('sdc')
  .description('science data centre file access: serve the API, or query, upload and download files')
  .showHelpAfterError()
  .exitOverride();

registerServeCommand(program);
registerClientCommands(program);
registerSeedCommand(program);
registerKeysCommand(program);
registerReconcileCommand(program);
registerMigrateCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  console.error(`sdc: ${(err as Error).message}`);
  process.exit(1);
}
