import type { Command } from 'commander';
import { isKeyRole, KEY_ROLES, KeyNameError, type KeyStore } from '../catalog/index.js';
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
    .option('--role <role>', `what the key may do: ${KEY_ROLES.join(' or ')} (a curator may also correct the archive; a reader reads team-only files and uploads nothing)`, 'uploader')
    .action(async (name: string, flags: KeysFlags & { role: string }) => {
      // Refused before the catalog is opened: a mistyped role must not leave a key behind.
      if (!isKeyRole(flags.role)) {
        console.error(`sdc keys: --role expects one of ${KEY_ROLES.join(', ')}, got ${JSON.stringify(flags.role)}`);
        process.exitCode = 2;
        return;
      }
      const role = flags.role;
      try {
        const { key } = await withKeys(flags, (k) => k.create(name, role));
        console.log(key);
        console.error(`Created ${role} key "${name}". This is the only time it is shown: store it now. Send it as X-API-Key.`);
      } catch (err) {
        if (!(err instanceof KeyNameError)) throw err;
        console.error(`sdc keys: ${err.message}`);
        process.exitCode = 2;
      }
    });

  where(keys.command('list'))
    .description('list keys: name, role, key id, created, revoked (never the keys themselves)')
    .action(async (flags: KeysFlags) => {
      const list = await withKeys(flags, (k) => k.list());
      if (list.length === 0) {
        console.error('No keys: uploads are open to anyone on the embedded backends (local store + SQLite) unless SDC_REQUIRE_KEYS=true; on S3 or PostgreSQL they are closed unless SDC_REQUIRE_KEYS=false.');
        return;
      }
      const now = new Date().toISOString();
      // A revocation time ahead is a rotation's overlap: the key works until then.
      const revoked = (at: string | undefined) => (at === undefined ? '-' : at > now ? `${at} (overlap)` : at);
      const rows = [['NAME', 'ROLE', 'KEY ID', 'CREATED', 'REVOKED'], ...list.map((k) => [k.name, k.role, k.keyId, k.createdAt, revoked(k.revokedAt)])];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
    });

  where(keys.command('rotate <name>'))
    .description('give <name> a new key of the same role (uploads keep their uploader name); its old key keeps working for the overlap, then is revoked')
    .option('--overlap <duration>', 'how long the old key keeps working: seconds, or a number with s, m, h or d', '24h')
    .action(async (name: string, flags: KeysFlags & { overlap: string }) => {
      const overlap = parseDuration(flags.overlap);
      if (overlap === undefined) {
        console.error(`sdc keys: --overlap expects a duration such as 3600, 90m, 24h or 7d (at most 365d), got ${JSON.stringify(flags.overlap)}`);
        process.exitCode = 2;
        return;
      }
      const result = await withKeys(flags, (k) => k.rotate(name, overlap));
      if (result.kind === 'rotated') {
        console.log(result.key);
        console.error(
          `New ${result.info.role} key for "${name}" (key id ${result.info.keyId}). This is the only time it is shown: store it now. ` +
            `The old key works until ${result.oldUntil}; "sdc keys revoke ${name}" ends both at once.`,
        );
      } else {
        console.error(
          result.kind === 'unknown'
            ? `sdc keys: no key named "${name}". "sdc keys list" shows the names.`
            : `sdc keys: every key of "${name}" is revoked; a revoked name is not given a new key (create one under another name).`,
        );
        process.exitCode = 2;
      }
    });

  where(keys.command('revoke <name>'))
    .description('revoke the key named <name> (all its keys, after a rotation too): refused (403) from now on')
    .action(async (name: string, flags: KeysFlags) => {
      const result = await withKeys(flags, (k) => k.revoke(name));
      if (result === 'unknown') {
        console.error(`sdc keys: no key named "${name}". "sdc keys list" shows the names.`);
        process.exitCode = 2;
      } else console.error(result === 'revoked' ? `Revoked key "${name}".` : `Key "${name}" was already revoked.`);
    });
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `3600`, `90m`, `24h`, `7d` as seconds; undefined when not one of those or over a year. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] || 's']!;
  return seconds <= 365 * 86400 ? seconds : undefined;
}
