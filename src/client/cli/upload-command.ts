import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { stateFileOf } from '../multipart-upload.js';
import { addConnectionOptions, openClient, wholeNumber, type ClientFlags } from './client-options.js';
import { expandUploadArguments } from './upload-arguments.js';
import { EXIT, RunTally } from './run-tally.js';
import { TransferProgress } from './transfer-progress.js';
import { runPool } from '../../concurrency/run-pool.js';

interface UploadFlags extends ClientFlags {
  readonly jobs: number;
  readonly partThreshold: number;
  readonly parts: number;
}

/** `sdc upload <file...>`: files of the local mirror, each under its path in it. */
export function registerUploadCommand(program: Command, prefix: string): void {
  const cmd = program
    .command('upload')
    .description('upload files (or every file under a folder) from the data directory, each under its path relative to it')
    .argument('<file...>', 'files inside the data directory, at their stored paths (relative paths: from the working directory, else from the data directory); folders are walked')
    .option('-j, --jobs <n>', 'files uploaded at once', wholeNumber(1, 64), 4)
    .option('--part-threshold <MiB>', 'files of this size or more go in parts (resumed if interrupted)', wholeNumber(5, 5 * 1024 * 1024), 64)
    .option('--parts <n>', 'parts of one file sent at once', wholeNumber(1, 32), 4);
  addConnectionOptions(cmd, prefix, { dataDir: true })
    .addHelpText(
      'after',
      `
A file is checked against the naming convention before any request: one that the
service would refuse is refused here with the service's own message.

Examples:
  $ cd ~/imap-data && sdc upload imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf
  $ sdc upload --data-dir ~/imap-data ~/imap-data/imap/mag/l1b/2024/*/*.cdf
  $ sdc upload --data-dir ~/imap-data imap/mag/l1b/2024/01/imap_mag_l1b_norm_20240105_20240105_v00-01.cdf
  $ ${prefix}_DATA_DIR=~/imap-data sdc upload --jobs 8 ~/imap-data/imap/swe`,
    )
    .action(async (args: string[], flags: UploadFlags, command: Command) => {
      const stderr = (line: string) => process.stderr.write(`${line}\n`);
      const { config, client } = openClient(command, flags, (line) => progress.message(line));
      const files = await expandUploadArguments(args, config.dataDir);
      const progress = new TransferProgress({ stderr: process.stderr, stdout: process.stdout, quiet: flags.quiet === true, files: files.length });
      const tally = new RunTally<'uploaded' | 'already archived'>('upload', progress);
      // Ctrl-C (or SIGTERM) mid-run: say what was kept and how to go on, then end as a shell expects.
      const inFlight = new Set<string>();
      let finished = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        progress.stop();
        stderr(interruptedMessage(finished, files.length, [...inFlight].map((file) => resolve(stateFileOf(file))).filter((state) => existsSync(state))));
        process.exit(signal === 'SIGINT' ? EXIT.interrupted : 143);
      };
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
      try {
        const left = await runPool(
          files,
          flags.jobs,
          async ({ file, problem }) => {
            if (problem) return tally.fail(file, problem);
            const bar = progress.file(basename(file));
            inFlight.add(file);
            try {
              const result = await client.upload(file, {
                dataDir: config.dataDir,
                onProgress: bar.update,
                multipartThreshold: flags.partThreshold * 1024 * 1024,
                partConcurrency: flags.parts,
                onResume: (stored, parts) => progress.message(`sdc upload: ${file}: resuming an interrupted upload, ${stored} of ${parts} parts already stored`),
              });
              tally.succeeded(result.status);
              progress.data(result.path);
            } catch (err) {
              tally.fail(file, err);
            } finally {
              inFlight.delete(file);
              finished++;
              bar.done();
              progress.fileFinished();
            }
          },
          () => tally.stopped,
        );
        tally.skip(left);
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        progress.stop();
        await client.close();
      }
      if (files.length === 0) stderr('sdc upload: the folders given hold no files');
      process.exitCode = tally.finish(flags.quiet === true);
    });
}

/**
 * What an interrupted upload says: how far it got, what was kept (uploads in parts keep
 * their stored parts, named in a state file beside the file) and that the same command
 * goes on from there (archived files are recognised by their SHA-256, see docs/client.md).
 */
export function interruptedMessage(finished: number, total: number, stateFiles: readonly string[]): string {
  const kept =
    stateFiles.length === 0
      ? 'Files cut off mid-transfer were not stored (a file is stored whole or not at all).'
      : `Kept for resuming: the stored parts of ${stateFiles.length === 1 ? 'an upload' : `${stateFiles.length} uploads`} in parts, recorded in\n${stateFiles.map((f) => `  ${f}`).join('\n')}`;
  return (
    `sdc upload: interrupted after ${finished} of ${total} file${total === 1 ? '' : 's'}. ${kept}\n` +
    'Run the same command again to go on: files already archived with the same bytes count as "already archived", uploads in parts resume.'
  );
}
