import type { Command } from 'commander';
import { ConflictError, UnreachableError } from '../client-errors.js';
import { addConnectionOptions, openClient, type ClientFlags } from './client-options.js';
import { describe, EXIT } from './run-tally.js';

interface WithdrawFlags extends ClientFlags {
  readonly reason: string;
  readonly supersededBy?: string;
}

/**
 * `sdc withdraw <path> --reason <text> [--superseded-by <path>]` (docs/client.md): a curator's
 * withdrawal (docs/api.md "Withdrawn files"). The record as it now is goes to stdout as JSON;
 * what happened to stderr. Exit 0 withdrawn, 3 already withdrawn, 1 refused, 2 usage, 4 unreachable.
 */
export function registerWithdrawCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('withdraw')
    .description('withdraw an archived file (curator key): it leaves queries and downloads, its record stays as a tombstone')
    .argument('<path>', 'stored path or bare file name of the file to withdraw')
    .requiredOption('--reason <text>', 'why it is withdrawn (1 to 1000 characters; shown with its 410 and its record)')
    .option('--superseded-by <path>', 'stored path or file name of the archived file that replaces it');
  addConnectionOptions(cmd, prefix, { dataDir: false })
    .addHelpText(
      'after',
      `
Needs a curator key (sdc keys create NAME --role curator), from --api-key or ${prefix}_API_KEY.
A withdrawal is never undone; the name is never reused (upload the correction as a new version).

Examples:
  $ sdc withdraw imap_swe_l1a_sci_20240105_20240105_v00-01.cdf --reason "wrong calibration table" \\
      --superseded-by imap_swe_l1a_sci_20240105_20240105_v00-02.cdf`,
    )
    .action(async (path: string, flags: WithdrawFlags, command: Command) => {
      const message = (line: string) => process.stderr.write(`${line}\n`);
      const { client } = openClient(command, flags, message, { engine: 'node' });
      try {
        const record = await client.withdraw(path, { reason: flags.reason, supersededBy: flags.supersededBy });
        process.stdout.write(`${JSON.stringify(record)}\n`);
        if (!flags.quiet) {
          message(`withdrew ${record.file_path} on ${record.withdrawn_date}${record.superseded_by ? `, superseded by ${record.superseded_by}` : ''}`);
        }
      } catch (err) {
        message(`sdc withdraw: ${describe(err)}`);
        process.exitCode = err instanceof UnreachableError ? EXIT.unreachable : err instanceof ConflictError ? EXIT.conflict : EXIT.failed;
      } finally {
        await client.close();
      }
    });
}
