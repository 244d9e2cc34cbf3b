/**
 * Statements that put a catalog back to the schema before migration 0011 (the lifecycle's
 * columns and the change log), for the tests of earlier migrations on older catalogs: Kysely
 * runs migrations in name order only, so a test that undoes 0009 or 0010 undoes 0011 first.
 * A migration after 0011 adds its own undo here, ahead of these.
 */
export function undoAfter0010(engine: 'sqlite' | 'postgres'): string[] {
  return [...undoAfter0011(engine), ...undo0011(engine)];
}

/** The schema as 0.1.0 left it (its newest migration is 0011). */
export function undoAfter0011(engine: 'sqlite' | 'postgres'): string[] {
  return [...undo0017(engine), ...undo0016(), ...undo0015(engine), ...undo0014(), ...undo0013(), ...undo0012(engine)];
}

/** Migration 0017 (descriptor_days): its table and the triggers on coverage_days that keep it (and PostgreSQL's functions of them). */
function undo0017(engine: 'sqlite' | 'postgres'): string[] {
  const triggers =
    engine === 'postgres'
      ? ['DROP TRIGGER coverage_days_removed ON coverage_days', 'DROP TRIGGER coverage_days_added ON coverage_days', 'DROP FUNCTION descriptor_days_removed()', 'DROP FUNCTION descriptor_days_added()']
      : ['DROP TRIGGER coverage_days_removed', 'DROP TRIGGER coverage_days_added'];
  return [...triggers, 'DROP TABLE descriptor_days', "DELETE FROM kysely_migration WHERE name = '0017-descriptor-days'"];
}

/** Migration 0016 (the public's path-order indexes): its two indexes. */
function undo0016(): string[] {
  return ['DROP INDEX files_public_descriptor', 'DROP INDEX files_public_path', "DELETE FROM kysely_migration WHERE name = '0016-public-path-indexes'"];
}

/** Migration 0015 (the change log's ids taken at commit, PostgreSQL only): its tables and trigger's function. */
function undo0015(engine: 'sqlite' | 'postgres'): string[] {
  return [
    ...(engine === 'postgres' ? ['DROP TABLE changes_commits', 'DROP TABLE changes_pending', 'DROP FUNCTION changes_at_commit()'] : []),
    "DELETE FROM kysely_migration WHERE name = '0015-change-log-at-commit'",
  ];
}

/** Migration 0014 (the file an audit is reading): its table. */
function undo0014(): string[] {
  return ['DROP TABLE audit_reads', "DELETE FROM kysely_migration WHERE name = '0014-audit-reads'"];
}

/** Migration 0013 (numbered releases): its tables. */
function undo0013(): string[] {
  return ['DROP TABLE release_files', 'DROP TABLE releases', "DELETE FROM kysely_migration WHERE name = '0013-releases'"];
}

/** Migration 0012 (who sees what): its columns, indexes and trigger; SQLite's files_search as 0011 made it. */
function undo0012(engine: 'sqlite' | 'postgres'): string[] {
  return [
    'DROP TRIGGER files_older_release_insert' + (engine === 'postgres' ? ' ON files' : ''),
    ...(engine === 'postgres' ? ['DROP FUNCTION files_older_release_insert()'] : []),
    'DROP INDEX changes_audience',
    'DROP INDEX files_release_pending',
    ...(engine === 'sqlite'
      ? [
          'DROP INDEX files_search',
          'CREATE INDEX files_search ON files (instrument, data_level, start_date, descriptor, version, file_path, end_date, extension, ingestion_date, size, sha256, uploader, ' +
            'status, withdrawn_date, withdrawn_reason, withdrawn_by, superseded_by, verified_date, fixity)',
        ]
      : ['DROP INDEX files_release_date']),
    ...['release_date', 'release', 'release_logged'].map((column) => `ALTER TABLE files DROP COLUMN ${column}`),
    'ALTER TABLE changes DROP COLUMN audience',
    "DELETE FROM kysely_migration WHERE name = '0012-access'",
  ];
}

function undo0011(engine: 'sqlite' | 'postgres'): string[] {
  return [
    'DROP TABLE changes',
    'DROP INDEX files_withdrawn',
    'DROP INDEX files_fixity_failed',
    'DROP INDEX files_verified',
    // files_search as 0007 made it (0011 makes it again with its columns; SQLite only).
    ...(engine === 'sqlite'
      ? [
          'DROP INDEX files_search',
          'CREATE INDEX files_search ON files (instrument, data_level, start_date, descriptor, version, file_path, end_date, extension, ingestion_date, size, sha256, uploader)',
        ]
      : []),
    ...['status', 'withdrawn_date', 'withdrawn_reason', 'withdrawn_by', 'superseded_by', 'verified_date', 'fixity'].map((column) => `ALTER TABLE files DROP COLUMN ${column}`),
    "DELETE FROM kysely_migration WHERE name = '0011-lifecycle'",
  ];
}
