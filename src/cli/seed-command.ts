import type { Command } from 'commander';
import { syntheticRecords } from '../catalog/index.js';
import { bulkLoadCatalog } from '../catalog/open-catalog.js';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { loadMissionConfig } from '../mission/index.js';
import { checkOperatorTarget, CREATE_OPTION } from './operator-target.js';

interface SeedFlags extends ServerSettings {
  count: string;
  first?: string;
  create?: boolean;
}

/** `sdc seed`: fills a catalog with realistic synthetic records, for trials and benchmarks. */
export function registerSeedCommand(program: Command): void {
  program
    .command('seed')
    .description('fill the catalog with synthetic records (all instruments and levels, ten years, several versions)')
    .requiredOption('--count <n>', 'how many records')
    .option('--first <i>', 'index of the first synthetic record (to add more later)', '0')
    .option('--home <dir>', 'folder of the embedded catalog [SDC_HOME, ./sdc-data]')
    .option('--catalog <url>', 'catalog to fill [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]')
    .option('--mission-config <file>', 'mission definition JSON [SDC_MISSION_CONFIG, built-in imap]')
    .option(...CREATE_OPTION)
    .addHelpText('after', '\nExample:\n  sdc seed --count 1000000 --home /tmp/sdc-bench --create')
    .action(async (flags: SeedFlags) => {
      const count = Number(flags.count);
      const first = Number(flags.first ?? 0);
      if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(first) || first < 0) {
        throw new Error('--count must be a whole number >= 1 and --first >= 0');
      }
      const config = loadServerConfig(process.env, flags);
      await checkOperatorTarget('seed', config, { create: flags.create });
      const started = process.hrtime.bigint();
      // One bulk load: a seed larger than the catalog builds its indexes once, at the end.
      const inserted = await bulkLoadCatalog(config.catalog, syntheticRecords(loadMissionConfig(config.missionConfig), count, first));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      console.error(`seeded ${inserted} new records (of ${count}) in ${seconds.toFixed(1)} s: ${Math.round(count / seconds)} records/s`);
    });
}
