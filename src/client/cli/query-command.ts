import { Option, type Command } from 'commander';
import { addConnectionOptions, openClient, type ClientFlags } from './client-options.js';
import { addFilterOptions, filterFrom, type FilterFlags } from './filter-options.js';
import { OUTPUT_FORMATS, writeRecords, type OutputFormat } from './record-output.js';
import { describe } from './run-tally.js';

interface QueryFlags extends ClientFlags, FilterFlags {
  readonly output: OutputFormat;
}

/** `sdc query`: records matching the filters, streamed to stdout as a table, JSON or CSV. */
export function registerQueryCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('query')
    .description('list archived files whose metadata match the filters (no filter: every file)');
  addFilterOptions(cmd);
  cmd.addOption(new Option('-o, --output <format>', 'table (the spec fields, aligned), json (array of every field) or csv').choices(OUTPUT_FORMATS).default('table'));
  addConnectionOptions(cmd, prefix, { dataDir: false })
    .addHelpText(
      'after',
      `
Examples:
  $ sdc query --instrument swe --data-level l1a --start-date 20240101 --end-date 20240131
  $ sdc query --instrument mag --version '*' --output json > mag.json
  $ sdc query --file-path imap_swe_l1a_sci_20240105_20240105_v00-01.cdf --output csv
  $ ${prefix}_DATA_ACCESS_URL=https://data.example.org sdc query --descriptor burst`,
    )
    .action(async (flags: QueryFlags, command: Command) => {
      const message = (line: string) => process.stderr.write(`${line}\n`);
      const { client } = openClient(command, flags, message);
      try {
        const count = await writeRecords(client.records(filterFrom(flags)), flags.output, process.stdout);
        if (!flags.quiet && flags.output === 'table') message(count === 0 ? 'No files match.' : `${count} file${count === 1 ? '' : 's'}`);
      } catch (err) {
        // The reader stopped reading (`sdc query | head`): that is its choice, not a failure.
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
        message(`sdc query: ${describe(err)}`);
        process.exitCode = 1;
      } finally {
        await client.close();
      }
    });
}
