import { sql, type Kysely } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';

/*
 * Steps that more than one migration takes, or too long to read inline (migrations.ts).
 */

/** 0017's table, triggers and fill, beside the reads they serve. */
export { createDescriptorDays } from './descriptor-days.js';

/** The columns SQLite's covering index `files_search` has held since 0007; later migrations append theirs. */
const SEARCH_INDEX_BASE = ['instrument', 'data_level', 'start_date', 'descriptor', 'version', 'file_path', 'end_date', 'extension', 'ingestion_date', 'size', 'sha256', 'uploader'];

/** Makes SQLite's covering index again with `extra` columns after the base ones, and its statistics if the catalog keeps them. */
export async function rebuildSqliteSearchIndex(db: Kysely<unknown>, extra: readonly string[]): Promise<void> {
  await db.schema.dropIndex('files_search').execute();
  await db.schema.createIndex('files_search').on('files').columns([...SEARCH_INDEX_BASE, ...extra]).execute();
  const { rows } = await sql`select 1 from sqlite_master where name = 'sqlite_stat1'`.execute(db);
  if (rows.length > 0) await sql`analyze files_search`.execute(db);
}

/**
 * What release_date holds in a row whose INSERT did not name it: only an earlier release's
 * (this one's inserts name every record column, record-columns.ts, NULL included). A trigger
 * replaces it at once by the row's ingestion date; it sorts before any date, so even unreplaced
 * it would never hide a file the earlier release published.
 */
export const OLDER_RELEASE_INSERT = '0000-01-01T00:00:00.000Z';

/** The trigger that dates an earlier release's inserts (0012): public from their ingestion, as that release served them. */
export async function dateOlderReleasesInserts(db: Kysely<unknown>, dialect: CatalogDialect): Promise<void> {
  if (dialect.engine === 'sqlite') {
    await sql
      .raw(
        `CREATE TRIGGER files_older_release_insert AFTER INSERT ON files WHEN NEW.release_date = '${OLDER_RELEASE_INSERT}'` +
          ' BEGIN UPDATE files SET release_date = NEW.ingestion_date WHERE file_path = NEW.file_path; END',
      )
      .execute(db);
    return;
  }
  await sql
    .raw(
      'CREATE FUNCTION files_older_release_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.release_date := NEW.ingestion_date; RETURN NEW; END $$',
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER files_older_release_insert BEFORE INSERT ON files FOR EACH ROW WHEN (NEW.release_date = '${OLDER_RELEASE_INSERT}')` +
        ' EXECUTE FUNCTION files_older_release_insert()',
    )
    .execute(db);
}
