import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';
import type { NameLeases } from './name-leases.js';
import type { CatalogDatabase } from './schema.js';

/**
 * Name leases in the catalog database, written once with Kysely for both engines. A lease is
 * one row per file_path (primary key): acquiring inserts it, or takes over the row only when
 * it has expired or is the acquirer's own, in one INSERT ... ON CONFLICT DO UPDATE ... WHERE
 * statement, which SQLite runs alone and PostgreSQL runs holding the row's lock, so racing
 * acquirers cannot both succeed. Expiry is in milliseconds of the database's clock.
 */
export class KyselyNameLeases implements NameLeases {
  constructor(
    private readonly db: Kysely<CatalogDatabase>,
    private readonly dialect: CatalogDialect,
    private readonly driver: <T>(operation: string, work: () => Promise<T>) => Promise<T>,
  ) {}

  /** Milliseconds since 1970 by the database's clock (one clock for every holder). */
  private now(): RawBuilder<number> {
    return this.dialect.engine === 'sqlite'
      ? sql<number>`cast(round((julianday('now') - 2440587.5) * 86400000) as integer)`
      : sql<number>`cast(floor(extract(epoch from clock_timestamp()) * 1000) as bigint)`;
  }

  acquire(filePath: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.driver('lease', async () => {
      const expires = sql<number>`${this.now()} + ${Math.round(ttlMs)}`;
      const result = await this.db
        .insertInto('name_leases')
        .values({ file_path: filePath, holder, expires_at: expires })
        .onConflict((oc) =>
          oc
            .column('file_path')
            .doUpdateSet({ holder, expires_at: expires })
            .where((eb) => eb.or([eb('name_leases.expires_at', '<=', this.now()), eb('name_leases.holder', '=', holder)])),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  renew(filePath: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.driver('lease', async () => {
      const result = await this.db
        .updateTable('name_leases')
        .set({ expires_at: sql<number>`${this.now()} + ${Math.round(ttlMs)}` })
        .where('file_path', '=', filePath)
        .where('holder', '=', holder)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  held(filePath: string): Promise<boolean> {
    return this.driver('lease', async () => {
      const row = await this.db.selectFrom('name_leases').select('holder').where('file_path', '=', filePath).where('expires_at', '>', this.now()).executeTakeFirst();
      return row !== undefined;
    });
  }

  release(filePath: string, holder: string): Promise<void> {
    return this.driver('lease', async () => {
      await this.db.deleteFrom('name_leases').where('file_path', '=', filePath).where('holder', '=', holder).execute();
    });
  }
}
