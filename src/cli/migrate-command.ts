import type { Command } from 'commander';
import { describePlan, previousReleaseMayServe } from '../catalog/migration-plan.js';
import { catalogMigrationPlan, describeCatalogUrl, openCatalog } from '../catalog/open-catalog.js';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { checkOperatorTarget, CREATE_OPTION } from './operator-target.js';

interface MigrateFlags extends ServerSettings {
  readonly create?: boolean;
  readonly check?: boolean;
  readonly contract?: boolean;
}

/**
 * `sdc migrate`: brings the catalog's schema up to date (servers also do it when they start).
 * Expand steps run at once; a contract step only with `--contract`, which the operator passes
 * once every instance of the previous release is gone; `--check` only says what would run and
 * whether the previous release may keep serving (docs/deploy.md "Upgrading without downtime").
 */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('create or update the catalog schema (sdc serve also does this at start)')
    .option('--home <dir>', 'folder of the embedded catalog [SDC_HOME, ./sdc-data]')
    .option('--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]')
    .option('--check', 'apply nothing: list the pending migrations and say whether instances of the previous release may keep serving after them (exit 1 if not)')
    .option('--contract', 'also apply contract steps (they remove what the previous release reads): only once every instance of it is gone')
    .option(...CREATE_OPTION)
    .action(async (flags: MigrateFlags) => {
      const config = loadServerConfig(process.env, flags);
      await checkOperatorTarget('migrate', config, { create: flags.create });
      const where = describeCatalogUrl(config.catalog);
      if (flags.check) {
        const plan = await catalogMigrationPlan(config.catalog);
        console.log(`${where}\n${describePlan(plan)}`);
        if (!previousReleaseMayServe(plan) && !flags.contract) process.exitCode = 1;
        return;
      }
      let applied: readonly string[] = [];
      const catalog = await openCatalog(config.catalog, { onMigrated: (names) => (applied = names), migrate: { contract: flags.contract } });
      await catalog.close();
      if (applied.length === 0) console.log(`catalog schema is up to date, nothing to apply: ${where}`);
      else console.log(`applied ${applied.length} migration(s) to ${where}:\n${applied.map((name) => `  ${name}`).join('\n')}\ncatalog schema is up to date`);
    });
}
