import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ReleaseDescription, ReleaseFormat, ReleaseSummary } from '../../wire/release.js';
import { formatBytes } from '../../wire/bytes.js';
import { ConflictError, UnreachableError } from '../client-errors.js';
import type { ReleaseRequest } from '../release-calls.js';
import { terminalText } from '../terminal-text.js';
import { addConnectionOptions, openClient, type ClientFlags } from './client-options.js';
import { addFilterOptions, filterFrom, hasFilter, type FilterFlags } from './filter-options.js';
import { describe, EXIT } from './run-tally.js';

/*
 * `sdc release create|list|show|retract` (docs/client.md "Releases"): numbered releases
 * (docs/api.md "Releases"). Data (JSON, CSV, Metalink, DataCite) to stdout, what happened to
 * stderr. Exit 0 done, 1 refused, 2 usage, 3 already retracted, 4 unreachable.
 */

interface CreateFlags extends ClientFlags, FilterFlags {
  readonly title: string;
  readonly description?: string;
  readonly files?: string[];
  readonly fromFile?: string;
  readonly exclude?: string[];
  readonly date?: string;
  readonly early?: boolean;
}

const OUTPUTS = ['json', 'csv', 'metalink', 'datacite'] as const;

/** Runs one release call, printing its failure and setting the exit status. */
async function run(name: string, command: Command, flags: ClientFlags, work: (client: ReturnType<typeof openClient>['client'], message: (line: string) => void) => Promise<void>): Promise<void> {
  const message = (line: string) => process.stderr.write(`${line}\n`);
  const { client } = openClient(command, flags, message, { engine: 'node' });
  try {
    await work(client, message);
  } catch (err) {
    message(`sdc release ${name}: ${describe(err)}`);
    process.exitCode = err instanceof UnreachableError ? EXIT.unreachable : err instanceof ConflictError ? EXIT.conflict : EXIT.failed;
  } finally {
    await client.close();
  }
}

/** A release as one line of `sdc release list`. */
export function releaseLine(r: ReleaseSummary): string {
  return `${String(r.release).padStart(4)}  ${r.status.padEnd(9)}  ${r.release_date}  ${String(r.file_count).padStart(7)} files  ${formatBytes(r.bytes).padStart(9)}  ${terminalText(r.title)}`;
}

/** The paths of a list file: one a line; blank lines and lines starting with # left out. */
export async function pathsOfListFile(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

export function registerReleaseCommand(program: Command, prefix: string): void {
  const release = program.command('release').description('numbered releases: make one (curator key), list them, show one, retract one');

  const create = release
    .command('create')
    .description('make a numbered release of files named, listed in a file, or matched by filter options (curator key)')
    .requiredOption('--title <text>', 'its title (one line)')
    .option('--description <text>', 'what it holds, in words')
    .option('--files <path-or-name...>', 'the files, by stored path or file name')
    .option('--from-file <list>', 'a file listing the files, one stored path or file name a line')
    .option('--exclude <path-or-name...>', 'files left out (applied after the latest version of each product was chosen)')
    .option('--date <instant>', 'when its files become public (ISO-8601 with a zone, or YYYYMMDD); in the future: scheduled. Default now')
    .option('--early', 'an early release (kind early-release)');
  addFilterOptions(create);
  addConnectionOptions(create, prefix, { dataDir: false })
    .addHelpText(
      'after',
      `
With filter options, the latest version of each product matched, unless --version is given.

Examples:
  $ sdc release create --title "SWE L1A, January" --instrument swe --data-level l1a --start-date 20240101 --end-date 20240131
  $ sdc release create --title "Calibration files" --from-file calibration.txt --date 2027-01-01T00:00:00Z
  $ sdc release create --title "Early MAG" --early --files imap_mag_l1b_norm_20240301_20240302_v01-00.cdf`,
    )
    .action(async (flags: CreateFlags, command: Command) => {
      const sources = [flags.files !== undefined, flags.fromFile !== undefined, hasFilter(flags)].filter(Boolean).length;
      if (sources !== 1) command.error('error: name the files with exactly one of --files, --from-file or filter options', { exitCode: 2 });
      await run('create', command, flags, async (client, message) => {
        const files = flags.files ?? (flags.fromFile !== undefined ? await pathsOfListFile(flags.fromFile) : undefined);
        const query = files === undefined ? (Object.fromEntries(Object.entries(filterFrom(flags)).map(([k, v]) => [k, String(v)])) as Record<string, string>) : undefined;
        const request: ReleaseRequest = {
          title: flags.title,
          ...(flags.description !== undefined ? { description: flags.description } : {}),
          ...(files !== undefined ? { files } : { query }),
          ...(flags.exclude !== undefined ? { exclude: flags.exclude } : {}),
          ...(flags.date !== undefined ? { releaseDate: flags.date } : {}),
          ...(flags.early ? { kind: 'early-release' as const } : {}),
        };
        const created = await client.createRelease(request);
        process.stdout.write(`${JSON.stringify(created)}\n`);
        if (!flags.quiet) message(`release ${created.release}: ${created.files} files, ${formatBytes(created.bytes)}, public from ${created.release_date}`);
      });
    });

  const list = release.command('list').description('the releases you may see (published ones without a key), by number').option('--output <format>', 'table or json', 'table');
  addConnectionOptions(list, prefix, { dataDir: false }).action(async (flags: ClientFlags & { output: string }, command: Command) => {
    if (!['table', 'json'].includes(flags.output)) command.error('error: --output takes table or json', { exitCode: 2 });
    await run('list', command, flags, async (client) => {
      const releases = await client.releases();
      if (flags.output === 'json') process.stdout.write(`${JSON.stringify(releases)}\n`);
      else for (const r of releases) process.stdout.write(`${releaseLine(r)}\n`);
    });
  });

  const show = release
    .command('show')
    .description('a release and its manifest (json), or the manifest as csv or metalink, or its DataCite description')
    .argument('<n>', 'the release number')
    .option('--output <format>', `one of ${OUTPUTS.join(', ')}`, 'json');
  addConnectionOptions(show, prefix, { dataDir: false }).action(async (n: string, flags: ClientFlags & { output: string }, command: Command) => {
    if (!/^[1-9]\d{0,8}$/.test(n)) command.error(`error: ${n} is not a release number (a whole number from 1)`, { exitCode: 2 });
    if (!(OUTPUTS as readonly string[]).includes(flags.output)) command.error(`error: --output takes one of ${OUTPUTS.join(', ')}`, { exitCode: 2 });
    await run('show', command, flags, async (client) => {
      const text = await client.releaseDocument(Number(n), flags.output as ReleaseFormat);
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    });
  });

  const retract = release
    .command('retract')
    .description('retract a release (curator key): its files return to the team unless another release or the policy makes them public')
    .argument('<n>', 'the release number')
    .requiredOption('--reason <text>', 'why (one line, at most 1000 characters)');
  addConnectionOptions(retract, prefix, { dataDir: false }).action(async (n: string, flags: ClientFlags & { reason: string }, command: Command) => {
    if (!/^[1-9]\d{0,8}$/.test(n)) command.error(`error: ${n} is not a release number (a whole number from 1)`, { exitCode: 2 });
    await run('retract', command, flags, async (client, message) => {
      const retracted: ReleaseDescription = await client.retractRelease(Number(n), flags.reason);
      process.stdout.write(`${JSON.stringify(retracted)}\n`);
      if (!flags.quiet) message(`retracted release ${retracted.release} on ${retracted.retracted_date ?? ''}`);
    });
  });
}
