import type { Command } from 'commander';
import type { ServerSettings } from '../config.js';
import { purgeWithdrawn } from '../service/index.js';
import { parseInstant } from '../wire/instant.js';
import { BACKEND_OPTIONS, openBackendContext } from './backend-context.js';

/** `--withdrawn-before`: YYYY-MM-DD or YYYYMMDD (the day's start, UTC), or an ISO-8601 date-time with a zone (src/wire/instant.ts). */
export function purgeCutoff(value: string): string | undefined {
  return parseInstant(value, { dashedDays: true });
}

interface PurgeFlags extends ServerSettings {
  readonly withdrawnBefore: string;
  readonly dryRun?: boolean;
  readonly yes?: boolean;
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
    .option('--dry-run', 'print what would be deleted, delete nothing')
    .option('--yes', 'purge even with a date in the future (every file withdrawn so far, the latest ones too)');
  for (const [flag, description] of BACKEND_OPTIONS) command.option(flag, description);
  command.action(async (flags: PurgeFlags) => {
    const before = purgeCutoff(flags.withdrawnBefore);
    if (before === undefined) {
      command.error(`error: --withdrawn-before ${JSON.stringify(flags.withdrawnBefore)}: expected YYYY-MM-DD or an ISO-8601 date-time with a zone, e.g. 2026-01-31 or 2026-01-31T12:00:00Z`, {
        exitCode: 2,
        code: 'sdc.usage',
      });
    }
    // A date not yet come includes withdrawals of a moment ago: said, not done, unless confirmed (docs/deploy.md "Purging withdrawn files").
    if (Date.parse(before!) > Date.now() && !flags.yes && !flags.dryRun) {
      command.error(
        `error: --withdrawn-before ${before!} is in the future: it includes every file withdrawn so far, those withdrawn a moment ago too. ` +
          'See what it includes with --dry-run; add --yes to purge them all.',
        { exitCode: 2, code: 'sdc.usage' },
      );
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
