import { Option, type Command } from 'commander';
import type { ArchiveRecord } from '../archive-record.js';
import type { Client } from '../client.js';
import { InvalidQueryError } from '../client-errors.js';
import { addConnectionOptions, openClient, type ClientFlags } from './client-options.js';
import { addFilterOptions, filterFrom, type FilterFlags } from './filter-options.js';
import { writeRecords } from './record-output.js';
import { describe } from './run-tally.js';
import { parseInstant } from '../../wire/instant.js';

const WATCH_FORMATS = ['ndjson', 'table'] as const;

interface WatchFlags extends ClientFlags, FilterFlags {
  readonly output?: (typeof WATCH_FORMATS)[number];
  readonly lastEventId?: string;
  readonly download?: boolean;
  readonly force?: boolean;
}

/** The line `sdc watch` leaves on stderr when it stops; scripts look for it. */
export const RESUME_PREFIX = 'sdc watch: resume with --last-event-id ';
/** On stderr once the feed is open: files indexed from now on will be printed. */
export const CONNECTED_LINE = 'sdc watch: connected, waiting for new files';

/** `sdc watch`: files as the archive indexes them, from the live feed (GET /events). */
export function registerWatchCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('watch')
    .description('print each new file matching the filters as it is indexed, and each withdrawal; optionally download the new files')
    .option('--last-event-id <id>', 'continue just after this event (from an earlier run) instead of from now')
    .option('--download', 'download each new file into the data directory before printing it')
    .option('-f, --force', 'with --download: download even when an identical copy is already there');
  addFilterOptions(cmd).addOption(
    new Option('-o, --output <format>', 'ndjson (one JSON record a line) or table [ndjson unless stdout is a terminal]').choices(WATCH_FORMATS),
  );
  addConnectionOptions(cmd, prefix, { dataDir: true })
    .addHelpText(
      'after',
      `
Runs until interrupted (Ctrl-C or SIGTERM: exit 0, or 1 if a download failed). A lost
connection is reopened with backoff and continues after the last file printed. On stopping,
stderr says where to continue:
  ${RESUME_PREFIX}<id>

Examples:
  $ sdc watch --instrument swe --data-level l2
  $ sdc watch --latest --output ndjson | jq -r .file_path
  $ sdc watch --instrument mag --download --data-dir ~/imap-data
  $ sdc watch --last-event-id <id> --download          pick up where an earlier run stopped`,
    )
    .action(async (flags: WatchFlags, command: Command) => {
      // Files indexed by a moment already past are all there: a watch for them would wait forever.
      if (typeof flags.until === 'string' && untilEnd(flags.until) <= Date.now()) {
        command.error(`error: --until ${flags.until} is in the past: no file indexed from now on can match. List those files with sdc query --until ${flags.until}.`, {
          exitCode: 2,
        });
      }
      const message = (line: string) => process.stderr.write(`${line}\n`);
      // A watcher outlasts outages: it keeps reconnecting rather than giving up on the service.
      const { config, client } = openClient(command, flags, message, { failFast: false });
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
      let lastId = flags.lastEventId;
      let failed = 0;
      const format = flags.output ?? (process.stdout.isTTY ? 'table' : 'ndjson');
      const events = client.watch(filterFrom(flags), {
        lastEventId: flags.lastEventId,
        withdrawals: true,
        signal: stop.signal,
        onConnect: () => flags.quiet || message(CONNECTED_LINE),
        onReconnect: (err, attempt, delayMs) =>
          flags.quiet || message(`sdc watch: ${describe(err)}; reconnecting in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt})`),
      });
      // A record is printed once handled (downloaded, with --download); its id then counts as done.
      async function* handled(): AsyncIterable<ArchiveRecord> {
        for await (const { id, change, record } of events) {
          if (change === 'withdrawn') {
            // Never downloaded. ndjson: the tombstone record (its "status": "withdrawn" tells it
            // apart); a table: a line of its own on stderr, not a row that reads as a new file.
            if (format === 'ndjson') yield record;
            else message(withdrawnLine(record));
            lastId = id;
            continue;
          }
          if (!flags.download || (await download(client, record, config.dataDir, flags.force === true, message))) yield record;
          else failed++;
          lastId = id;
        }
      }
      try {
        await writeRecords(handled(), format, process.stdout, { live: true });
      } catch (err) {
        if (err instanceof InvalidQueryError && flags.lastEventId !== undefined && lastId === flags.lastEventId && /Last-Event-ID/i.test(err.message)) {
          // The id was refused: say what a valid one looks like, and do not offer it back to resume with.
          message(badResumeId(flags.lastEventId));
          lastId = undefined;
          process.exitCode = 2;
        } else if ((err as NodeJS.ErrnoException).code !== 'EPIPE') {
          message(`sdc watch: ${describe(err)}`);
          process.exitCode = 1;
        }
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        await client.close();
      }
      if (lastId) message(`${RESUME_PREFIX}${lastId}`);
      if (failed > 0) {
        message(`sdc watch: ${failed} download${failed === 1 ? '' : 's'} failed`);
        process.exitCode = 1;
      }
    });
}

/** A withdrawal as `sdc watch` prints it beside a table: `withdrawn <path>: <reason>`, and its replacement. */
export function withdrawnLine(record: ArchiveRecord): string {
  const tombstone = record as ArchiveRecord & { withdrawn_reason?: string; superseded_by?: string };
  return `withdrawn ${record.file_path}: ${tombstone.withdrawn_reason ?? '(no reason given)'}${tombstone.superseded_by ? ` (superseded by ${tombstone.superseded_by})` : ''}`;
}

/** What a refused --last-event-id gets: what a valid id is and where it comes from. */
export function badResumeId(id: string): string {
  return (
    `sdc watch: --last-event-id ${JSON.stringify(id)} is not an id this service handed out. A valid id is the one printed by an ` +
    `earlier run on its last line, "${RESUME_PREFIX}<id>": a whole number (an id of the change log; an earlier version's long string of letters, digits, - and _ is still taken), ` +
    'copied whole. Leave the option out to start from now.'
  );
}

/** Downloads one announced file (the record saves a lookup); false, with a message, when it failed. */
async function download(client: Client, record: ArchiveRecord, dataDir: string, force: boolean, message: (line: string) => void): Promise<boolean> {
  try {
    await client.download(record.file_path, { dest: dataDir, record, force });
    return true;
  } catch (err) {
    message(`sdc watch: ${record.file_path}: ${describe(err)}`);
    return false;
  }
}

/** The last moment --until admits, ms: the end of the day (UTC) for a day, else the date-time itself. */
export function untilEnd(until: string): number {
  const end = parseInstant(until, { end: true });
  return end === undefined ? Number.NaN : Date.parse(end);
}
