import type { Command } from 'commander';
import { KeyNameError, type KeyStore } from '../catalog/index.js';
import { openCatalog } from '../catalog/open-catalog.js';
import { loadServerConfig, type ServerSettings } from '../config.js';
import { checkOperatorTarget, withCreateOption } from './operator-target.js';

interface KeysFlags extends ServerSettings {
  create?: boolean;
}

/** Runs `job` on the key store of the configured catalog, then closes it. */
async function withKeys<T>(flags: KeysFlags, job: (keys: KeyStore) => Promise<T>): Promise<T> {
  const config = loadServerConfig(process.env, flags);
  await checkOperatorTarget('keys', config, { create: flags.create });
  const catalog = await openCatalog(config.catalog);
  try {
    return await job(catalog.keys());
  } finally {
    await catalog.close();
  }
}

/**
 * `sdc keys create|list|revoke`: the API keys of the catalog that `sdc serve` uses
 * (same SDC_HOME / SDC_CATALOG). A running server sees changes at once.
 */
export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('manage the API keys that uploads (and, optionally, reads) need');
  const where = (cmd: Command) =>
    withCreateOption(
      cmd
        .option('--home <dir>', 'folder of the embedded catalog [SDC_HOME, ./sdc-data]')
        .option('--catalog <url>', 'catalog, sqlite:<file> or postgres://... [SDC_CATALOG, sqlite:$SDC_HOME/catalog.db]'),
    );

  where(keys.command('create <name>'))
    .description('create a key named <name> (who uploads with it, e.g. swe-pipeline) and print it once')
    .action(async (name: string, flags: KeysFlags) => {
      try {
        const { key } = await withKeys(flags, (k) => k.create(name));
        console.log(key);
        console.error(`Created key "${name}". This is the only time it is shown: store it now. Send it as X-API-Key.`);
      } catch (err) {
        if (!(err instanceof KeyNameError)) throw err;
        console.error(`sdc keys: ${err.message}`);
        process.exitCode = 2;
      }
    });

  where(keys.command('list'))
    .description('list keys: name, key id, created, revoked (never the keys themselves)')
    .action(async (flags: KeysFlags) => {
      const list = await withKeys(flags, (k) => k.list());
      if (list.length === 0) {
        console.error('No keys: uploads are open to anyone on the embedded backends (local store + SQLite) unless SDC_REQUIRE_KEYS=true; on S3 or PostgreSQL they are closed unless SDC_REQUIRE_KEYS=false.');
        return;
      }
      const rows = [['NAME', 'KEY ID', 'CREATED', 'REVOKED'], ...list.map((k) => [k.name, k.keyId, k.createdAt, k.revokedAt ?? '-'])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
    });

  where(keys.command('revoke <name>'))
    .description('revoke the key named <name>: it is refused (403) from now on')
    .action(async (name: string, flags: KeysFlags) => {
      const result = await withKeys(flags, (k) => k.revoke(name));
      if (result === 'unknown') {
        console.error(`sdc keys: no key named "${name}". "sdc keys list" shows the names.`);
        process.exitCode = 2;
      } else console.error(result === 'revoked' ? `Revoked key "${name}".` : `Key "${name}" was already revoked.`);
    });
}
