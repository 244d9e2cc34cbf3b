import type { Command } from 'commander';
import { describeCatalogUrl, openCatalog } from '../catalog/open-catalog.js';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { checkOperatorTarget, CREATE_OPTION } from './operator-target.js';

/** `sdc migrate`: brings the catalog's schema up to date (servers also do it when they start). */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('create or update the catalog schema (sdc serve also does this at start)')
    .option('--home <dir>', 'folder of the embedded catalog [SDC_HOME, ./sdc-data]')
    .option('--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]')
    .option(...CREATE_OPTION)
    .action(async (flags: ServerSettings & { create?: boolean }) => {
      const config = loadServerConfig(process.env, flags);
      await checkOperatorTarget('migrate', config, { create: flags.create });
      let applied: readonly string[] = [];
      const catalog = await openCatalog(config.catalog, { onMigrated: (names) => (applied = names) });
      await catalog.close();
      const where = describeCatalogUrl(config.catalog);
      if (applied.length === 0) console.log(`catalog schema is up to date, nothing to apply: ${where}`);
      else console.log(`applied ${applied.length} migration(s) to ${where}:\n${applied.map((name) => `  ${name}`).join('\n')}\ncatalog schema is up to date`);
    });
}
