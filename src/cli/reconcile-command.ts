import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import type { ServerSettings } from '../config.js';
import { reconcile, type ReconcileProgress } from '../service/index.js';
import { BACKEND_OPTIONS, openBackendContext } from './backend-context.js';
import { CREATE_OPTION } from './operator-target.js';

const FORMAT = 'reconcile | {objects} objects listed | {records} records read | {indexed} indexed | {skipped} skipped | {missing} without objects';

/**
 * `sdc reconcile`: lists the store, indexes objects that have no record, reports
 * records whose object is gone. Safe at any time, beside running servers, and on a
 * schedule (cron, EventBridge Scheduler). Progress goes to stderr when it is a terminal.
 */
export function registerReconcileCommand(program: Command): void {
  const command = program
    .command('reconcile')
    .description('index objects stored without a record (e.g. PUT straight to S3) and report records whose object is missing');
  for (const [flag, description] of BACKEND_OPTIONS) command.option(flag, description);
  command.option(...CREATE_OPTION);
  command.action(async (flags: ServerSettings & { create?: boolean }) => {
    const ctx = await openBackendContext('reconcile', flags);
    // A counter line, no bar: the total is not known ahead (S3 does not count a bucket).
    const bar = process.stderr.isTTY ? new SingleBar({ stream: process.stderr, format: FORMAT, fps: 5 }) : undefined;
    try {
      bar?.start(0, 0, { objects: 0, records: 0, indexed: 0, skipped: 0, missing: 0 } satisfies ReconcileProgress);
      // Missing records are printed as they are found, so none is held in memory.
      let missing = 0;
      const report = await reconcile(ctx, {
        onProgress: (p) => bar?.update(p.objects + p.records, p),
        onMissing: (path) => {
          if (missing++ === 0) console.log('records without an object:');
          console.log(`  ${path}`);
        },
      });
      bar?.stop();
      console.log(`indexed ${report.indexed} object(s) that had no record`);
      console.log(`skipped ${report.skipped} object(s) whose key breaks the naming rules`);
      if (report.refusedLinks > 0) console.log(`refused ${report.refusedLinks} symbolic link(s) in the store: never followed nor indexed (remove them)`);
      if (report.notRegularFiles !== undefined) console.log(`refused ${report.notRegularFiles} entries in the store that are no regular file (FIFO, socket, device): never opened nor indexed (remove them)`);
      if (report.refused > 0) console.log(`refused ${report.refused} staged upload(s) whose name already held another file (the stored file stays)`);
      if (report.deferred > 0) console.log(`left ${report.deferred} staged upload(s) waiting: another promotion held the name; run reconcile again to promote them`);
      console.log(`${missing} record(s) without an object`);
    } finally {
      bar?.stop();
      await ctx.catalog.close();
    }
  });
}
