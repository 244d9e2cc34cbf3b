import { sql, type Kysely, type Migration } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';
import type { MigrationKind } from './migration-plan.js';
import { createDescriptorDays, dateOlderReleasesInserts, OLDER_RELEASE_INSERT, rebuildSqliteSearchIndex } from './migration-steps.js';
import { REFRESH_ALL_BEFORE_STATUS_SQL } from './product-refresh.js';
import { CHANGES_AT_COMMIT_SCHEMA } from './postgres/postgres-post-write.js';

/** A migration and its kind (migration-plan.ts): whether the previous release keeps working after it. */
export interface CatalogMigration extends Migration {
  readonly kind: MigrationKind;
}

/**
 * Schema migrations, written with Kysely's schema builder so one list serves SQLite
 * and PostgreSQL (run by migration-runner.ts). Append new migrations; never edit one that has shipped. Each says its
 * kind: `expand` adds only; a step that drops or renames what an earlier release reads is
 * `contract`, and ships one release after the code that stopped reading it.
 */
export function migrations(dialect: CatalogDialect): Record<string, CatalogMigration> {
  return {
    '0001-files': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('files')
          .addColumn('file_path', 'text', (c) => c.primaryKey())
          .addColumn('instrument', 'text', (c) => c.notNull())
          .addColumn('data_level', 'text', (c) => c.notNull())
          .addColumn('descriptor', 'text', (c) => c.notNull())
          .addColumn('start_date', 'text', (c) => c.notNull())
          .addColumn('end_date', 'text', (c) => c.notNull())
          .addColumn('version', 'text', (c) => c.notNull())
          .addColumn('extension', 'text', (c) => c.notNull())
          .addColumn('ingestion_date', 'text', (c) => c.notNull())
          .addColumn('size', 'bigint', (c) => c.notNull())
          .addColumn('sha256', 'text', (c) => c.notNull())
          .execute();
        // The usual search: an instrument, a level and a span of start dates.
        await db.schema.createIndex('files_instrument_level_start').on('files').columns(['instrument', 'data_level', 'start_date']).execute();
        // Searches by date alone, and by descriptor across instruments; (descriptor, file_path)
        // also yields a descriptor's files already in answer order, so a page needs no sort.
        await db.schema.createIndex('files_start_date').on('files').column('start_date').execute();
        await db.schema.createIndex('files_descriptor').on('files').columns(['descriptor', 'file_path']).execute();
      },
    },
    '0002-query-indexes': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        // version=latest looks for a newer version of the same product.
        await db.schema
          .createIndex('files_product_version')
          .on('files')
          .columns(['instrument', 'data_level', 'descriptor', 'start_date', 'version'])
          .execute();
        // Harvesters ask for what is new since their last run, and the live feed walks this order.
        await db.schema.createIndex('files_ingestion').on('files').columns(['ingestion_date', 'file_path']).execute();
      },
    },
    // Who uploaded a file: the name of the API key whose upload address stored it (null when
    // keys are off, or for files indexed by reconcile).
    '0003-files-uploader': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('files').addColumn('uploader', 'text').execute();
      },
    },
    // API keys, stored hashed (see src/catalog/kysely-key-store.ts). Never deleted, only
    // revoked, so a key's name keeps meaning one key in the records and the logs.
    '0004-api-keys': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('api_keys')
          .addColumn('key_id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull().unique())
          .addColumn('key_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('revoked_at', 'text')
          .execute();
      },
    },
    // file_path ordered byte by byte on every backend (see CatalogDialect); a no-op where that is the default.
    '0005-file-path-byte-order': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        if (!dialect.byteOrderCollation) return;
        await sql`alter table files alter column file_path type text collate ${sql.id(dialect.byteOrderCollation)}`.execute(db);
      },
    },
    // Leases on names being written into the object store (src/catalog/kysely-name-leases.ts):
    // one row per name, so that two promotions of one name never write it at once.
    '0006-name-leases': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('name_leases')
          .addColumn('file_path', 'text', (c) => c.primaryKey())
          .addColumn('holder', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    // SQLite: the usual search (an instrument, a level, a span of start dates) answered from
    // the index alone. Every column a record has is in its key (SQLite has no INCLUDE), so no
    // table row is read per match: at 10M records a month of one product is ~900 rows, each a
    // B-tree descent into the table. descriptor and version follow start_date so that
    // version=latest's look for a newer version can also be a seek in this index (the planner
    // takes it or files_product_version, both cover it). It replaces
    // files_instrument_level_start, which it extends. A no-op on PostgreSQL: there the same
    // index (with INCLUDE) was measured no faster at 1M or 10M records, vacuumed or not, and
    // 12 times the size of the one it would replace.
    '0007-covering-search-index': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        if (dialect.engine !== 'sqlite') return;
        await db.schema
          .createIndex('files_search')
          .on('files')
          .columns(['instrument', 'data_level', 'start_date', 'descriptor', 'version', 'file_path', 'end_date', 'extension', 'ingestion_date', 'size', 'sha256', 'uploader'])
          .execute();
        // A catalog with planner statistics gets this index's too (the others' are kept);
        // one without gets them all at open or after a bulk load (analyzeIfStale).
        const { rows } = await sql`select 1 from sqlite_master where name = 'sqlite_stat1'`.execute(db);
        if (rows.length > 0) await sql`analyze files_search`.execute(db);
        await db.schema.dropIndex('files_instrument_level_start').execute();
      },
    },
    // version=latest and coverage kept at ingest (src/catalog/product-refresh.ts): each file's
    // latest flag and a row per (instrument, data level, start date) with its files' counts,
    // sizes and end dates, filled here from the files already there.
    '0008-latest-flag-and-coverage-days': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('files').addColumn('is_latest', 'integer', (c) => c.notNull().defaultTo(1)).execute();
        await db.schema
          .createTable('coverage_days')
          .addColumn('instrument', 'text', (c) => c.notNull())
          .addColumn('data_level', 'text', (c) => c.notNull())
          .addColumn('start_date', 'text', (c) => c.notNull())
          .addColumn('files', 'bigint', (c) => c.notNull())
          .addColumn('size', 'bigint', (c) => c.notNull())
          .addColumn('end_date', 'text', (c) => c.notNull())
          .addColumn('latest_files', 'bigint', (c) => c.notNull())
          .addColumn('latest_size', 'bigint', (c) => c.notNull())
          .addColumn('latest_end_date', 'text')
          .addPrimaryKeyConstraint('coverage_days_key', ['instrument', 'data_level', 'start_date'])
          .execute();
        for (const statement of REFRESH_ALL_BEFORE_STATUS_SQL) await sql.raw(statement).execute(db);
      },
    },
    // Key rotation (`sdc keys rotate`, docs/trust.md): a name may have several keys, one per
    // generation, each with its own row; (name, generation) stays unique, so racing creates of
    // one name (generation 1) or racing rotations still let exactly one win. A key whose
    // revoked_at lies ahead is live until then (the overlap of a rotation). The table is made
    // again because SQLite cannot drop the unique constraint on name in place.
    '0009-api-key-generations': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('api_keys_0009')
          .addColumn('key_id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('key_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('revoked_at', 'text')
          .addUniqueConstraint('api_keys_name_generation', ['name', 'generation'])
          .execute();
        await sql`insert into api_keys_0009 (key_id, name, generation, key_hash, created_at, revoked_at)
                  select key_id, name, 1, key_hash, created_at, revoked_at from api_keys`.execute(db);
        await db.schema.dropTable('api_keys').execute();
        await db.schema.alterTable('api_keys_0009').renameTo('api_keys').execute();
      },
    },
    // Roles on keys (docs/api.md, "API keys"): every key made before roles existed uploads, so it
    // becomes an `uploader`; `sdc keys create --role curator` makes the others.
    '0010-api-key-roles': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('api_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('uploader')).execute();
      },
    },
    // The archive's lifecycle (docs/api.md "Withdrawn files", "The change log"; docs/deploy.md
    // "Fixity audits"), all of its schema in one step:
    // - a record's status and tombstone (NULL while the file is archived: every record so far,
    //   and the answers of clients that never ask for withdrawn files stay as they were), and
    //   what the last fixity audit found;
    // - the change log: one row per ingest or withdrawal, its id given in commit order, the
    //   record as the change left it kept as JSON text (an entry never changes afterwards);
    // - SQLite's covering index made again with the new columns, so the usual search still
    //   reads no table row; a partial index of the withdrawn files (few: a status=withdrawn
    //   query, a purge) and of the files that failed an audit (the metrics count them); and
    //   the audit's order, oldest verified first.
    '0011-lifecycle': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        for (const column of ['status', 'withdrawn_date', 'withdrawn_reason', 'withdrawn_by', 'superseded_by', 'verified_date', 'fixity']) {
          await db.schema.alterTable('files').addColumn(column, 'text').execute();
        }
        await db.schema
          .createTable('changes')
          .addColumn('id', dialect.engine === 'sqlite' ? 'integer' : 'bigserial', (c) => (dialect.engine === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()))
          .addColumn('time', 'text', (c) => c.notNull())
          .addColumn('change', 'text', (c) => c.notNull())
          .addColumn('file_path', 'text', (c) => c.notNull())
          .addColumn('record', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('changes_file_path').on('changes').columns(['file_path', 'id']).execute();
        if (dialect.engine === 'sqlite') {
          await rebuildSqliteSearchIndex(db, ['status', 'withdrawn_date', 'withdrawn_reason', 'withdrawn_by', 'superseded_by', 'verified_date', 'fixity']);
        }
        await db.schema.createIndex('files_withdrawn').on('files').columns(['file_path']).where(sql.ref('status'), '=', 'withdrawn').execute();
        await db.schema.createIndex('files_fixity_failed').on('files').columns(['file_path']).where(sql.ref('fixity'), 'in', ['mismatch', 'missing']).execute();
        await db.schema.createIndex('files_verified').on('files').columns(['verified_date', 'file_path']).execute();
      },
    },
    // Who sees what (docs/api.md "Who sees what"): a file's release date and the release that
    // published it; every file already stored was public from its ingestion. A change-log entry
    // says who may read it ('public' or 'team'), fixed when it is appended, so a reader without
    // a key walks ids that never go back (change-log.ts). `release_logged`: the background step
    // has written the 'released' entry of a file whose date passed (release-publisher.ts).
    // SQLite's covering index is made again with the new columns. A record inserted by an earlier
    // release (an instance still serving during a rolling upgrade, docs/deploy.md) names no
    // release_date: it is public from its ingestion, as that release served it.
    '0012-access': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('files').addColumn('release_date', 'text', (c) => c.defaultTo(OLDER_RELEASE_INSERT)).execute();
        await db.schema.alterTable('files').addColumn('release', 'integer').execute();
        await db.schema.alterTable('files').addColumn('release_logged', 'integer').execute();
        await sql`UPDATE files SET release_date = ingestion_date`.execute(db);
        await dateOlderReleasesInserts(db, dialect);
        await db.schema.alterTable('changes').addColumn('audience', 'text', (c) => c.notNull().defaultTo('public')).execute();
        await db.schema.createIndex('changes_audience').on('changes').columns(['audience', 'id']).execute();
        // The background step's work: team files whose date is set and whose entry is not written yet.
        await db.schema
          .createIndex('files_release_pending')
          .on('files')
          .columns(['release_date'])
          .where(sql.ref('release_logged'), 'is', null)
          .execute();
        if (dialect.engine === 'sqlite') {
          await rebuildSqliteSearchIndex(db, ['status', 'withdrawn_date', 'withdrawn_reason', 'withdrawn_by', 'superseded_by', 'verified_date', 'fixity', 'release_date', 'release']);
        } else {
          await db.schema.createIndex('files_release_date').on('files').columns(['release_date', 'file_path']).execute();
        }
      },
    },
    // Numbered releases (docs/api.md "Releases"), expand-only: two new tables, nothing of 0.1.0's
    // touched. `releases`: one row per release, its retraction written into it (never deleted);
    // `release_files`: its manifest, each file's size and SHA-256 as they were when it was made,
    // read in file_path order (the primary key) and by path (release_files_path: the other
    // releases that hold a file, when one is retracted). The files table's `release` (0012)
    // names the release that made a file public.
    '0013-releases': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('releases')
          .addColumn('number', 'integer', (c) => c.primaryKey())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('description', 'text')
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('release_date', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('file_count', 'bigint', (c) => c.notNull())
          .addColumn('bytes', 'bigint', (c) => c.notNull())
          .addColumn('retracted_date', 'text')
          .addColumn('retracted_reason', 'text')
          .addColumn('retracted_by', 'text')
          .execute();
        await db.schema
          .createTable('release_files')
          .addColumn('release', 'integer', (c) => c.notNull())
          .addColumn('file_path', 'text', (c) => (dialect.engine === 'postgres' ? c.notNull().modifyEnd(sql`collate ${sql.id(dialect.byteOrderCollation!)}`) : c.notNull()))
          .addColumn('size', 'bigint', (c) => c.notNull())
          .addColumn('sha256', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('release_files_pkey', ['release', 'file_path'])
          .execute();
        await db.schema.createIndex('release_files_path').on('release_files').columns(['file_path', 'release']).execute();
      },
    },
    // The file an audit is reading (src/catalog/audit-queue.ts): a row written before its bytes
    // are read and removed with the fixity's record, so a run killed in the middle of a file
    // leaves the row, and the next run checks that file first (docs/deploy.md "Fixity audits").
    '0014-audit-reads': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('audit_reads')
          .addColumn('file_path', 'text', (c) => c.primaryKey())
          .addColumn('started', 'text', (c) => c.notNull())
          .execute();
        if (dialect.byteOrderCollation) {
          await sql`alter table audit_reads alter column file_path type text collate ${sql.id(dialect.byteOrderCollation)}`.execute(db);
        }
      },
    },
    // PostgreSQL: the change log's ids taken inside the COMMIT by a deferred trigger, so its
    // commit-order lock is held for that server-side step, never across a round trip to the
    // client (change-log.ts, postgres/postgres-post-write.ts; docs/performance.md "A
    // reprocessing campaign"). Adds only: an earlier release's writers append to `changes`
    // themselves under the same lock, in the same order. A no-op on SQLite.
    '0015-change-log-at-commit': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        if (dialect.engine !== 'postgres') return;
        for (const statement of CHANGES_AT_COMMIT_SCHEMA) await sql.raw(statement).execute(db);
      },
    },
    // A caller without a key reading in path order (version=*, a descriptor, a first page with
    // no selective filter; docs/performance.md "Who sees what at scale"): the archived files
    // that have a release date, in path order (and by descriptor in path order, as
    // files_descriptor), with the date beside the path. Their condition is implied by the
    // public's `release_date <= ?` and `status IS NULL` (visibility-sql.ts, archived-sql.ts), so
    // both engines may scan them instead of the primary key or files_descriptor: a team file
    // without a date is not in them, one dated ahead is skipped in the index, and no table row
    // is read for either. Reads by key holders do not say `release_date <= ?`: their plans stay.
    '0016-public-path-indexes': {
      kind: 'expand',
      async up(db: Kysely<unknown>) {
        const released = sql<boolean>`status IS NULL AND release_date IS NOT NULL`;
        await db.schema.createIndex('files_public_path').on('files').columns(['file_path', 'release_date']).where(released).execute();
        await db.schema.createIndex('files_public_descriptor').on('files').columns(['descriptor', 'file_path', 'release_date']).where(released).execute();
        if (dialect.engine === 'sqlite') {
          const { rows } = await sql`select 1 from sqlite_master where name = 'sqlite_stat1'`.execute(db);
          if (rows.length > 0) for (const index of ['files_public_path', 'files_public_descriptor']) await sql`analyze ${sql.id(index)}`.execute(db);
        }
      },
    },
    // A count with a descriptor sums day rows instead of reading the files (descriptor-days.ts,
    // kept-counts-sql.ts). The fill reads the whole files table once, coverage_days locked.
    '0017-descriptor-days': { kind: 'expand', up: (db: Kysely<unknown>) => createDescriptorDays(db, dialect) },
  };
}
