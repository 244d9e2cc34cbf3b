import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely, type MigrationProvider } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';
import { refuseContractSteps, type MigrateOptions, type MigrationPlan } from './migration-plan.js';
import { migrations } from './migrations.js';

/** What migrating would do (`sdc migrate --check`), applying nothing. */
export async function migrationPlan(db: Kysely<unknown>, dialect: CatalogDialect, schema?: string): Promise<MigrationPlan> {
  return planOf(migratorOf(db, dialect, schema), dialect);
}

function migratorOf(db: Kysely<unknown>, dialect: CatalogDialect, schema: string | undefined): Migrator {
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations(dialect)) };
  return new Migrator({ db, provider, migrationTableSchema: schema });
}

async function planOf(migrator: Migrator, dialect: CatalogDialect): Promise<MigrationPlan> {
  const known = migrations(dialect);
  const listed = await migrator.getMigrations();
  return {
    applied: listed.filter((m) => m.executedAt !== undefined).map((m) => m.name),
    pending: listed.filter((m) => m.executedAt === undefined).map((m) => ({ name: m.name, kind: known[m.name]!.kind })),
  };
}

/** How many migrations the migrator's table records as applied (known to this version or not). */
async function executedCount(db: Kysely<unknown>, schema: string | undefined): Promise<number> {
  const table = schema ? sql`${sql.id(schema)}.${sql.id(DEFAULT_MIGRATION_TABLE)}` : sql.id(DEFAULT_MIGRATION_TABLE);
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${table}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Brings the schema up to date; safe to run at every start; answers the names of the
 * migrations it applied (`sdc migrate` prints them). A contract step is refused unless
 * `options.contract` (migration-plan.ts). `schema` names where
 * PostgreSQL keeps the migrator's own tables: Kysely looks for them in every schema
 * unless told, and would take another deployment's for its own.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: CatalogDialect, schema?: string, options: MigrateOptions = {}): Promise<string[]> {
  const migrator = migratorOf(db, dialect, schema);
  const plan = await planOf(migrator, dialect);
  refuseContractSteps(plan, options);
  // Up to date: nothing to apply, so the migrator's lock is not waited for. On PostgreSQL it is
  // one for the whole database, held through another deployment's migrations (an index built
  // over millions of rows), which is no reason for this instance not to start.
  // A migration this version does not know is not in the plan: then the migrator runs, and refuses.
  if (plan.pending.length === 0 && (await executedCount(db, schema)) === plan.applied.length) return [];
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  const unknown = /previously executed migration (\S+) is missing/.exec(String((error as Error | undefined)?.message));
  if (unknown) {
    throw new Error(
      `the catalog has been migrated by a newer version of sdc (migration ${unknown[1]}, which this version does not know); use that version or a later one`,
      { cause: error },
    );
  }
  if (error || failed) {
    throw new Error(`catalog migration${failed ? ` ${failed.migrationName}` : ''} failed: ${String((error as Error | undefined)?.message ?? error)}`, {
      cause: error,
    });
  }
  // The migrations this call applied, in order (none when the schema was up to date).
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
