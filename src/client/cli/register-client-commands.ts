import type { Command } from 'commander';
import { registerDownloadCommand } from './download-command.js';
import { helpPrefix } from './client-options.js';
import { registerQueryCommand } from './query-command.js';
import { registerUploadCommand } from './upload-command.js';
import { registerWatchCommand } from './watch-command.js';
import { registerWithdrawCommand } from './withdraw-command.js';
import { registerReleaseCommand } from './release-command.js';
import { registerSignInCommands } from './login-command.js';

/**
 * The client side of `sdc`: query, upload, download, watch. Exit status (run-tally.ts EXIT):
 * 0 when everything asked for succeeded, 1 when something failed (with a one-line summary),
 * 2 for usage errors, 3 for an upload conflict, 4 when the service is unreachable.
 * Messages go to stderr, data (records, paths) to stdout.
 */
export function registerClientCommands(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  const prefix = helpPrefix(env);
  registerQueryCommand(program, prefix);
  registerUploadCommand(program, prefix);
  registerDownloadCommand(program, prefix);
  registerWatchCommand(program, prefix);
  registerWithdrawCommand(program, prefix);
  registerReleaseCommand(program, prefix);
  registerSignInCommands(program, prefix);
  addClientHelp(program, prefix);
}

/** The examples and exit statuses of the client commands, after the program's help. */
export function addClientHelp(program: Command, prefix: string): void {
  program.addHelpText(
    'after',
    `
Examples:
  $ sdc serve --home ./sdc-data                      run the service (embedded store and catalog)
  $ sdc query --instrument swe --start-date 20240101 list matching files as a table
  $ sdc query --data-level l2 --output csv > l2.csv  the same as CSV (or --output json)
  $ sdc upload imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf
  $ sdc download imap_swe_l1a_sci_20240105_20240105_v00-01.cdf
  $ sdc download --query --instrument mag --jobs 8   everything a query matches
  $ sdc query --since 20240601 --latest --limit 1000 one page of new files, latest versions
  $ sdc watch --instrument swe --download            fetch each new file as it is indexed

The client reads ${prefix}_DATA_ACCESS_URL (the service), ${prefix}_DATA_DIR (the local
mirror, default the current directory) and ${prefix}_API_KEY; each is also a flag. Without a
key, 'sdc login' signs in with the institution's account (sdc whoami, sdc logout).
Exit status: 0 all succeeded (already archived or present counts as success), 1 something
failed, 2 usage error, 3 upload conflict (other bytes under an archived name), 4 service
unreachable, 130 interrupted (see docs/client.md).
Run 'sdc <command> --help' for a command's options and examples.`,
  );
}
