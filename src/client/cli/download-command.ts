import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { resolveRequestPath, type MissionConfig } from '../../mission/index.js';
import type { ArchiveRecord } from '../archive-record.js';
import { NotFoundError, UnreachableError } from '../client-errors.js';
import { PARTIAL_SUFFIX } from '../download-file.js';
import { addConnectionOptions, openClient, wholeNumber, type ClientFlags } from './client-options.js';
import { addFilterOptions, filterFrom, hasFilter, type FilterFlags } from './filter-options.js';
import { spoolRecords, type SpooledRecords } from './query-spool.js';
import { describe, EXIT, RunTally } from './run-tally.js';
import { TransferProgress } from './transfer-progress.js';
import { runPool } from '../../concurrency/run-pool.js';
import { formatBytes } from '../../wire/bytes.js';

interface DownloadFlags extends ClientFlags, FilterFlags {
  readonly query?: boolean;
  readonly force?: boolean;
  readonly jobs: number;
  readonly yes?: boolean;
}

interface DownloadItem {
  /** What the user named (or the stored path a query found). */
  readonly label: string;
  readonly record?: ArchiveRecord;
}

/** `sdc download <path-or-name...>` or `sdc download --query <filters>`: files into the local mirror. */
export function registerDownloadCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('download')
    .description('download files into the data directory at their stored paths, skipping identical copies, resuming partial ones')
    .argument('[path-or-name...]', 'stored paths or bare file names')
    .option('--query', 'download every file the filter options match (instead of named files)');
  addFilterOptions(cmd)
    .option('-f, --force', 'download even when an identical copy is already in the data directory')
    .option('-j, --jobs <n>', 'files downloaded at once', wholeNumber(1, 64), 4)
    .option('-y, --yes', 'with --query and no filter: download the whole archive without asking (for scripts)');
  addConnectionOptions(cmd, prefix, { dataDir: true })
    .addHelpText(
      'after',
      `
Each file lands at <data dir>/<stored path>; an unfinished one is kept as <file>.part and
resumed by the next run. Downloads are checked against the catalog's size and SHA-256.

Examples:
  $ sdc download imap_swe_l1a_sci_20240105_20240105_v00-01.cdf
  $ sdc download --data-dir ~/imap-data imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240301_v01-00.cdf
  $ sdc download --query --instrument swe --data-level l1a --start-date 20240101 --end-date 20240131 --jobs 8
  $ ${prefix}_DATA_DIR=~/imap-data sdc download --query --instrument hit --force
  $ sdc download --release 3        # every file of release 3, exactly its manifest`,
    )
    .action(async (names: string[], given: DownloadFlags, command: Command) => {
      // --release N names its files by itself: a query of that release's manifest (docs/client.md).
      const flags: DownloadFlags = given.release !== undefined ? { ...given, query: true } : given;
      if (flags.query && names.length > 0) command.error('error: give file names or --query with filter options, not both', { exitCode: 2 });
      if (!flags.query && names.length === 0) command.error('error: name the files to download, or use --query with filter options', { exitCode: 2 });
      if (!flags.query && hasFilter(flags)) command.error('error: filter options select files only with --query', { exitCode: 2 });
      const message = (line: string) => process.stderr.write(`${line}\n`);
      let progress: TransferProgress | undefined;
      const { config, client } = openClient(command, flags, (line) => (progress ? progress.message(line) : message(line)));
      let spool: SpooledRecords | undefined;
      let stopListening = () => {};
      try {
        const named = distinctFiles(names, config.mission);
        let items: Iterable<DownloadItem> | AsyncIterable<DownloadItem> = named.map((label) => ({ label }));
        let total = named.length;
        if (flags.query) {
          spool = await spoolRecords(client.records(filterFrom(flags)));
          total = spool.count;
          if (wholeArchive(flags) && spool.count > 0 && !flags.yes) {
            const what = `${spool.count.toLocaleString('en')} file${spool.count === 1 ? '' : 's'}, ${formatBytes(spool.bytes)}`;
            if (!(process.stdin.isTTY && process.stderr.isTTY)) {
              message(
                `sdc download: --query without a filter selects the whole archive (${what}). ` +
                  'Add a filter (e.g. --instrument swe --start-date 20240101), or --yes to download it all.',
              );
              process.exitCode = 2;
              return;
            }
            if (!(await confirm(`sdc download: no filter given: this downloads the whole archive, ${what}, into ${config.dataDir}. Continue? [y/N] `))) {
              message('sdc download: nothing downloaded.');
              process.exitCode = 1;
              return;
            }
          }
          items = fromRecords(spool.records());
        }
        progress = new TransferProgress({ stderr: process.stderr, stdout: process.stdout, quiet: flags.quiet === true, files: total });
        // Ctrl-C (or SIGTERM) mid-run: say what was kept and how to go on, then end as a shell expects (130).
        const inFlight = new Set<string>();
        const onSignal = (signal: NodeJS.Signals) => {
          progress?.stop();
          message(interruptedMessage([...inFlight].filter((part) => existsSync(part))));
          process.exit(signal === 'SIGINT' ? EXIT.interrupted : 143);
        };
        process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
        stopListening = () => process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        const tally = new RunTally<'downloaded' | 'resumed' | 'already present'>('download', progress);
        const left = await runPool(items, flags.jobs, async ({ label, record }) => {
          const bar = progress!.file(label.slice(label.lastIndexOf('/') + 1));
          const part = partialPath(config.dataDir, record?.file_path ?? label, config.mission);
          if (part) inFlight.add(part);
          try {
            const result = await client.download(record?.file_path ?? label, { dest: config.dataDir, force: flags.force, record, onProgress: bar.update });
            tally.succeeded(result.status === 'present' ? 'already present' : result.resumedFrom > 0 ? 'resumed' : 'downloaded');
            progress!.data(result.localPath);
          } catch (err) {
            tally.fail(label, err instanceof NotFoundError ? notInArchive(label, err) : err);
          } finally {
            if (part) inFlight.delete(part);
            bar.done();
            progress!.fileFinished();
          }
        }, () => tally.stopped);
        tally.skip(left);
        progress.stop();
        if (flags.query && total === 0 && !flags.quiet) message('sdc download: no files match the query');
        process.exitCode = tally.finish(flags.quiet === true);
      } catch (err) {
        progress?.stop();
        message(`sdc download: ${describe(err)}`);
        process.exitCode = err instanceof UnreachableError ? EXIT.unreachable : EXIT.failed;
      } finally {
        stopListening();
        await spool?.remove();
        await client.close();
      }
    });
}

/** `--query` with no filter, or only `--version '*'` (any version): every file of the archive. */
function wholeArchive(flags: DownloadFlags): boolean {
  const filter = filterFrom(flags) as Record<string, unknown>;
  return Object.entries(filter).every(([name, value]) => (name === 'version' && value === '*') || name === 'overlap');
}

/** Asks on the terminal; true only for an answer that starts with y. */
async function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

/** Where the download of a path or name keeps its partial bytes (download-file.ts), when the name is valid. */
function partialPath(dataDir: string, pathOrName: string, mission: MissionConfig): string | undefined {
  const resolved = resolveRequestPath(pathOrName, mission);
  return resolved.kind === 'file' ? join(dataDir, ...resolved.path.split('/')) + PARTIAL_SUFFIX : undefined;
}

/** What an interrupted download says: which partial files were kept, and that the same command resumes them. */
export function interruptedMessage(parts: readonly string[]): string {
  if (parts.length === 0) return 'sdc download: interrupted; no partial file was left. Run the same command again to download the rest.';
  const list = parts.map((part) => `  ${part}`).join('\n');
  return (
    `sdc download: interrupted; kept ${parts.length === 1 ? 'the partial file' : `${parts.length} partial files`}:\n${list}\n` +
    'Run the same command again: it resumes from there (and checks the whole file against its SHA-256).'
  );
}

/**
 * A 404 in the command's words: the server's text tells an HTTP caller how to spell a /download
 * path, which a CLI user never types; what helps here is how to find the right name.
 */
function notInArchive(label: string, err: NotFoundError): NotFoundError {
  const name = label.slice(label.lastIndexOf('/') + 1);
  const product = name.split('_').slice(0, 4);
  const similar = product.length === 4 ? ` sdc query --instrument ${product[1]} --data-level ${product[2]} --descriptor ${product[3]} --version '*' lists that product's files;` : '';
  return new NotFoundError(`not in the archive (the service has no file ${name}).${similar} sdc query --file-path ${name} checks one name.`, err.status);
}

/** Each file once, however it was named (path or bare name): two writers of one `.part` would spoil it. */
function distinctFiles(names: readonly string[], mission: MissionConfig): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const resolved = resolveRequestPath(name, mission);
    const key = resolved.kind === 'file' ? resolved.path : name;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function* fromRecords(records: AsyncIterable<ArchiveRecord>): AsyncIterable<DownloadItem> {
  for await (const record of records) yield { label: record.file_path, record };
}
