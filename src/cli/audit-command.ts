import { InvalidArgumentError, type Command } from 'commander';
import type { ServerSettings } from '../config.js';
import { audit, type ServiceContext } from '../service/index.js';
import { BACKEND_OPTIONS, openBackendContext } from './backend-context.js';
import { failureMessage } from './failure-message.js';
import { CREATE_OPTION } from './operator-target.js';

/**
 * Exit statuses of `sdc audit` (docs/deploy.md "Fixity audits"): damage found is 1, as
 * usage errors are 2 everywhere; a catalog or store that failed is 3, so that a scheduler
 * (or its alert) tells "the archive holds damaged files" from "the audit could not run".
 */
export const AUDIT_FOUND_DAMAGE = 1;
export const AUDIT_COULD_NOT_RUN = 3;

function positive(what: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${what} must be a positive number, e.g. 10 (got ${JSON.stringify(value)})`);
    return n;
  };
}

interface AuditFlags extends ServerSettings {
  create?: boolean;
  maxDuration?: number;
  rate?: number;
  path?: string;
}

/**
 * `sdc audit`: re-reads stored files (one an earlier run left in the middle, then those never
 * verified, then the oldest verified), and
 * records in each record what was found (service/audit.ts). Prints each failure as found and
 * `checked N, ok N, mismatched N, missing N` at the end; safe beside running servers.
 */
export function registerAuditCommand(program: Command): void {
  const command = program
    .command('audit')
    .description('re-read stored files (oldest verified first), compare size and SHA-256 with their records, and record what was found; exit 1 when any file is damaged or missing, 3 when the store or catalog failed');
  for (const [flag, description] of BACKEND_OPTIONS) command.option(flag, description);
  command.option(...CREATE_OPTION);
  command.option('--max-duration <seconds>', 'stop after this long; the next run goes on where this one stopped', positive('--max-duration'));
  command.option('--rate <MB/s>', 'read no more than this many megabytes (10^6 bytes) a second', positive('--rate'));
  command.option('--path <prefix>', 'only files whose stored path starts with this, e.g. imap/mag/');
  command.action(async (flags: AuditFlags) => {
    let ctx: ServiceContext | undefined;
    try {
      ctx = await openBackendContext('audit', flags);
      let failures = 0;
      const report = await audit(ctx, {
        prefix: flags.path,
        maxDurationMs: flags.maxDuration === undefined ? undefined : flags.maxDuration * 1000,
        bytesPerSecond: flags.rate === undefined ? undefined : flags.rate * 1_000_000,
        onFailure: (failure) => {
          if (failures++ === 0) console.log('damaged or missing:');
          console.log(`  ${failure.fixity}: ${failure.path}: ${failure.detail}`);
        },
      });
      const seconds = report.elapsedMs / 1000;
      console.log(`checked ${report.checked}, ok ${report.ok}, mismatched ${report.mismatched}, missing ${report.missing}`);
      console.log(
        `read ${report.bytes} bytes in ${seconds.toFixed(1)} s (${(report.bytes / 1e6 / Math.max(seconds, 0.001)).toFixed(1)} MB/s)` +
          (report.stoppedAtLimit ? '; stopped at --max-duration: the next run goes on from here' : '; every file due was checked'),
      );
      if (failures > 0) {
        console.log('Restore each from a copy (docs/deploy.md "Fixity audits"), then run sdc audit --path <its path> to clear it.');
        process.exitCode = AUDIT_FOUND_DAMAGE;
      }
    } catch (err) {
      if ((err as Error).name === 'NoCatalogError') throw err;
      console.error(`sdc audit: stopped, the store or the catalog failed; no file was flagged for it. ${failureMessage(err)}`);
      process.exitCode = AUDIT_COULD_NOT_RUN;
    } finally {
      await ctx?.catalog.close();
    }
  });
}
