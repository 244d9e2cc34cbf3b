import type { Command } from 'commander';
import type { ServerSettings } from '../config.js';
import { isCalendarDate, isoDay } from '../mission/index.js';
import { purgeWithdrawn } from '../service/index.js';
import { BACKEND_OPTIONS, openBackendContext } from './backend-context.js';

/** `--withdrawn-before`: YYYY-MM-DD or YYYYMMDD (the day's start, UTC), or an ISO-8601 date-time with a zone. */
export function purgeCutoff(value: string): string | undefined {
  const compact = /^\d{4}-\d{2}-\d{2}$/.test(value) ? value.replace(/-/g, '') : value;
  if (/^\d{8}$/.test(compact)) return isCalendarDate(compact) ? `${isoDay(compact)}T00:00:00.000Z` : undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

interface PurgeFlags extends ServerSettings {
  readonly withdrawnBefore: string;
  readonly dryRun?: boolean;
}

/**
 * `sdc purge --withdrawn-before <date> [--dry-run]` (docs/deploy.md "Purging withdrawn files"):
 * an operator command on the catalog and store, like `sdc reconcile`. Prints each path whose
 * bytes it deleted (stdout), then a summary; the records stay.
 */
export function registerPurgeCommand(program: Command): void {
  const command = program
    .command('purge')
    .description('delete from the store the kept bytes of files withdrawn before a date (their records stay as tombstones)')
    .requiredOption('--withdrawn-before <date>', 'purge files withdrawn before this: YYYY-MM-DD (UTC midnight) or an ISO-8601 date-time with a zone')
    .option('--dry-run', 'print what would be deleted, delete nothing');
  for (const [flag, description] of BACKEND_OPTIONS) command.option(flag, description);
  command.action(async (flags: PurgeFlags) => {
    const before = purgeCutoff(flags.withdrawnBefore);
    if (before === undefined) {
      command.error(`error: --withdrawn-before ${JSON.stringify(flags.withdrawnBefore)}: expected YYYY-MM-DD or an ISO-8601 date-time with a zone, e.g. 2026-01-31 or 2026-01-31T12:00:00Z`, {
        exitCode: 2,
        code: 'sdc.usage',
      });
    }
    const ctx = await openBackendContext('purge', flags);
    try {
      const verb = flags.dryRun ? 'would delete' : 'deleted';
      const report = await purgeWithdrawn(ctx, before!, { dryRun: flags.dryRun, onPurged: (path, date) => console.log(`${verb} ${path} (withdrawn ${date})`) });
      console.log(`${verb} the bytes of ${report.purged} file(s) withdrawn before ${before}`);
      if (report.alreadyGone > 0) console.log(`${report.alreadyGone} file(s) withdrawn before then had no bytes left (purged earlier)`);
      if (report.kept > 0) console.log(`kept the bytes of ${report.kept} file(s) withdrawn since`);
      console.log('records kept: every withdrawn file keeps its tombstone');
    } finally {
      await ctx.catalog.close();
    }
  });
}
