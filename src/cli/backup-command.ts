import { resolve } from 'node:path';
import type { Command } from 'commander';
import { backupSqliteCatalog, describeCatalogUrl, restoreSqliteCatalog, type CatalogCounts } from '../catalog/open-catalog.js';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { checkOperatorTarget } from './operator-target.js';
import { pgDumpInvocation, pgProgramAvailable, pgRestoreInvocation, runPgProgram, shellLine, type PgInvocation } from './pg-tools.js';

interface BackupFlags extends ServerSettings {
  print?: boolean;
}

const WHERE: readonly [flag: string, description: string][] = [
  ['--home <dir>', 'folder of the embedded catalog [SDC_HOME, ./sdc-data]'],
  ['--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]'],
  ['--print', 'PostgreSQL: print the pg_dump / pg_restore command instead of running it'],
];

/** The SQLite file a `sqlite:` catalog URL names, or undefined for PostgreSQL. */
function sqliteFile(catalog: string): string | undefined {
  if (!catalog.startsWith('sqlite:')) return undefined;
  const file = catalog.slice('sqlite:'.length);
  if (file === ':memory:') throw new Error('an in-memory catalog (sqlite::memory:) has nothing to back up or restore');
  return resolve(file);
}

function report(verb: string, counts: CatalogCounts, file: string): void {
  console.log(`${verb} ${counts.records} record(s) and ${counts.keys} API key(s): ${file}`);
}

/** PostgreSQL: runs pg_dump / pg_restore when installed (and not --print), else prints the exact command. */
function runOrPrint(invocation: PgInvocation, print: boolean | undefined): boolean {
  if (!print && pgProgramAvailable(invocation.program)) {
    console.error(`sdc: running ${shellLine(invocation)}`);
    runPgProgram(invocation);
    return true;
  }
  if (!print) console.error(`sdc: ${invocation.program} is not installed here (Debian: apt-get install postgresql-client); run this where it is:`);
  console.log(shellLine(invocation));
  return false;
}

/**
 * `sdc backup <file>` and `sdc restore <file>`: the catalog (records and API keys) copied out
 * while servers run, and put back into a catalog that does not exist yet; docs/deploy.md,
 * *Backups and restores*, is the runbook (the store is backed up on its own, then `sdc reconcile`
 * indexes what was stored after the backup).
 */
export function registerBackupCommands(program: Command): void {
  const backup = program
    .command('backup <file>')
    .description('write a consistent copy of the catalog (records and API keys) to <file> while servers run');
  for (const [flag, description] of WHERE) backup.option(flag, description);
  backup.action(async (file: string, flags: BackupFlags) => {
    const config = loadServerConfig(process.env, flags);
    await checkOperatorTarget('backup', config, {});
    const target = resolve(file);
    const sqlite = sqliteFile(config.catalog);
    if (sqlite !== undefined) {
      report('backed up', await backupSqliteCatalog(sqlite, target), target);
      return;
    }
    if (runOrPrint(pgDumpInvocation(config.catalog, target), flags.print)) console.log(`backed up ${describeCatalogUrl(config.catalog)}: ${target}`);
  });

  const restore = program
    .command('restore <file>')
    .description('put a backup made by sdc backup in place as the catalog (which must not exist yet), then run sdc reconcile');
  for (const [flag, description] of WHERE) restore.option(flag, description);
  restore.action(async (file: string, flags: BackupFlags) => {
    const config = loadServerConfig(process.env, flags);
    // The catalog is made here: no --create needed, and an existing one is refused below.
    await checkOperatorTarget('restore', config, { create: true });
    const source = resolve(file);
    const sqlite = sqliteFile(config.catalog);
    if (sqlite !== undefined) report('restored', await restoreSqliteCatalog(source, sqlite), sqlite);
    else if (!runOrPrint(pgRestoreInvocation(config.catalog, source), flags.print)) return;
    else console.log(`restored ${source} into ${describeCatalogUrl(config.catalog)}`);
    console.error('sdc restore: now run "sdc reconcile" with the same settings, to index the files stored since the backup was made.');
  });
}
