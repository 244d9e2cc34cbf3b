import { InvalidArgumentError, Option, type Command } from 'commander';
import { MAX_PAGE_LIMIT } from '../../wire/query.js';
import type { QuerySort } from '../archive-record.js';
import { addConnectionOptions, openClient, wholeNumber, type ClientFlags } from './client-options.js';
import { addFilterOptions, filterFrom, type FilterFlags } from './filter-options.js';
import { OUTPUT_FORMATS, parseColumns, writeRecords } from './record-output.js';
import type { RecordField } from '../archive-record.js';
import { describe, EXIT } from './run-tally.js';
import { UnreachableError } from '../client-errors.js';
import { writeMetalink } from './metalink-output.js';

/** What `--output` takes: the record formats, and `metalink` (the server writes that document). */
const QUERY_OUTPUTS = [...OUTPUT_FORMATS, 'metalink'] as const;
type QueryOutput = (typeof QUERY_OUTPUTS)[number];

interface QueryFlags extends ClientFlags, FilterFlags {
  readonly output: QueryOutput;
  readonly format?: QueryOutput;
  readonly limit?: number;
  readonly cursor?: string;
  readonly sort?: string;
  readonly columns?: RecordField[];
}

/** The line `sdc query --limit` leaves on stderr when another page follows; scripts look for it. */
export const NEXT_PAGE_PREFIX = 'sdc query: next page: --cursor ';

/** `sdc query`: records matching the filters, streamed to stdout as a table, JSON, CSV or NDJSON. */
export function registerQueryCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('query')
    .description('list archived files whose metadata match the filters (no filter: every file)');
  addFilterOptions(cmd)
    .option('--limit <n>', `one page of at most n records (1 to ${MAX_PAGE_LIMIT}); the next page's cursor goes to stderr`, wholeNumber(1, MAX_PAGE_LIMIT))
    .option('--cursor <cursor>', 'continue after the page that printed it (keep the other options)')
    .option('--sort <order>', 'file_path (default), start_date or ingestion_date; - in front for descending, e.g. --sort=-ingestion_date')
    .option('--columns <fields>', 'the fields to show, in order, e.g. file_path,size,ingestion_date (any output format)', (raw: string) => {
      try {
        return parseColumns(raw);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    });
  cmd.addOption(
    new Option(
      '-o, --output <format>',
      'table (the spec fields, aligned), json (array of every field), csv, ndjson, or metalink (a Metalink 4 document for aria2c -M: size, SHA-256 and a signed address per file) (alias --format)',
    )
      .choices(QUERY_OUTPUTS)
      .default('table'),
  );
  cmd.addOption(new Option('--format <format>').choices(QUERY_OUTPUTS).hideHelp());
  addConnectionOptions(cmd, prefix, { dataDir: false })
    .addHelpText(
      'after',
      `
Examples:
  $ sdc query --instrument swe --data-level l1a --start-date 20240101 --end-date 20240131
  $ sdc query --instrument mag --version '*' --output json > mag.json
  $ sdc query --file-path imap_swe_l1a_sci_20240105_20240105_v00-01.cdf --output csv
  $ sdc query --since 2024-06-01T00:00:00Z --latest --output ndjson       new since a date, latest versions
  $ sdc query --start-date 20240101 --end-date 20240107 --overlap         files whose span meets the week
  $ sdc query --instrument swe --latest --output metalink > swe.meta4 && aria2c -M swe.meta4 -d data
  $ sdc query --since 20240601 --limit 1000 --format csv > page1.csv      one page; stderr says:
      ${NEXT_PAGE_PREFIX}<cursor>
  $ sdc query --since 20240601 --limit 1000 --format csv --cursor <cursor> > page2.csv
  $ ${prefix}_DATA_ACCESS_URL=https://data.example.org sdc query --descriptor burst --sort=-ingestion_date`,
    )
    .action(async (flags: QueryFlags, command: Command) => {
      const message = (line: string) => process.stderr.write(`${line}\n`);
      const output = flags.format ?? flags.output;
      // A few requests: node:http, which loads in a fraction of undici's import (http-engine.ts).
      const { client } = openClient(command, flags, message, { engine: 'node' });
      const query = { ...filterFrom(flags), sort: flags.sort as QuerySort | undefined, cursor: flags.cursor };
      try {
        if (output === 'metalink') {
          if (flags.columns) {
            message('sdc query: --columns does not apply to --output metalink (a Metalink lists each file\'s name, size, SHA-256 and address).');
            process.exitCode = EXIT.usage;
            return;
          }
          const page = await writeMetalink(client, { ...query, limit: flags.limit }, message);
          if (page.nextCursor !== undefined) message(`${NEXT_PAGE_PREFIX}${page.nextCursor}`);
          return;
        }
        if (flags.limit === undefined) {
          const count = await writeRecords(client.records(query), output, process.stdout, { columns: flags.columns });
          if (!flags.quiet && output === 'table') message(count === 0 ? 'No files match.' : `${count} file${count === 1 ? '' : 's'}`);
          return;
        }
        // One bounded page, read whole (and retried whole), then written.
        const page = await client.page({ ...query, limit: flags.limit });
        await writeRecords(page.records, output, process.stdout, { columns: flags.columns });
        if (!flags.quiet && output === 'table') message(`${page.records.length} of ${page.total ?? '?'} files`);
        if (page.nextCursor !== undefined) message(`${NEXT_PAGE_PREFIX}${page.nextCursor}`);
      } catch (err) {
        // The reader stopped reading (`sdc query | head`): that is its choice, not a failure.
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
        message(`sdc query: ${describe(err)}`);
        process.exitCode = err instanceof UnreachableError ? EXIT.unreachable : EXIT.failed;
      } finally {
        await client.close();
      }
    });
}
