import { basename } from 'node:path';
import type { Command } from 'commander';
import { addConnectionOptions, openClient, wholeNumber, type ClientFlags } from './client-options.js';
import { expandUploadArguments } from './upload-arguments.js';
import { RunTally } from './run-tally.js';
import { TransferProgress } from './transfer-progress.js';
import { runPool } from './worker-pool.js';

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
      const tally = new RunTally<'uploaded'>('upload', progress);
      try {
        await runPool(files, flags.jobs, async ({ file, problem }) => {
          if (problem) return tally.fail(file, problem);
          const bar = progress.file(basename(file));
          try {
            const result = await client.upload(file, {
              dataDir: config.dataDir,
              onProgress: bar.update,
              multipartThreshold: flags.partThreshold * 1024 * 1024,
              partConcurrency: flags.parts,
            });
            tally.succeeded('uploaded');
            progress.data(result.path);
          } catch (err) {
            tally.fail(file, err);
          } finally {
            bar.done();
            progress.fileFinished();
          }
        });
      } finally {
        progress.stop();
        await client.close();
      }
      if (files.length === 0) stderr('sdc upload: the folders given hold no files');
      process.exitCode = tally.finish(flags.quiet === true);
    });
}
