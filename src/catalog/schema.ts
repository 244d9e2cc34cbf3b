import type { Generated } from 'kysely';
import type { FileRecord } from './file-record.js';

/**
 * Table types for Kysely: the catalog's tables. The files table's record columns follow the
 * record (src/wire/record.ts, src/catalog/record-columns.ts): an integer field may come back
 * as text (BIGINT in PostgreSQL, which pg returns as a string), an optional one is NULL when
 * absent.
 */
export type FilesTable = {
  -readonly [F in keyof FileRecord]-?: FileRecord[F] extends number ? number | string : undefined extends FileRecord[F] ? Exclude<FileRecord[F], undefined> | null : FileRecord[F];
} & {
  /** 1 when no file of the same product has a higher version (src/catalog/product-refresh.ts). */
  is_latest: Generated<number>;
  /** 1 once the 'released' change of a team file whose date passed is logged (migration 0012, release-publisher.ts). */
  release_logged: Generated<number | null>;
};

export interface ApiKeysTable {
  /** Public part of the key, used to find its row. */
  key_id: string;
  name: string;
  /** `reader`, `uploader` or `curator` (migration 0010; KeyRole in key-store.ts). */
  role: string;
  /** 1 for the name's first key, one more for each rotation (migration 0009). */
  generation: number;
  /** Hex SHA-256 of the whole key. */
  key_hash: string;
  created_at: string;
  /** When the key stops working; ahead of now during a rotation's overlap. */
  revoked_at: string | null;
}

/** A name being written into the object store (see name-leases.ts). */
export interface NameLeasesTable {
  file_path: string;
  /** Who holds it: a random id per promotion. */
  holder: string;
  /** Milliseconds since 1970 (database clock); BIGINT in PostgreSQL (pg returns it as a string). */
  expires_at: number | string;
}

/** Per (instrument, data level, start date): what GET /coverage needs (src/catalog/product-refresh.ts). */
export interface CoverageDaysTable {
  instrument: string;
  data_level: string;
  start_date: string;
  files: number | string;
  size: number | string;
  end_date: string;
  latest_files: number | string;
  latest_size: number | string;
  latest_end_date: string | null;
}

/** Per (instrument, data level, start date, descriptor): the archived and latest files, kept with coverage_days (descriptor-days.ts). */
export interface DescriptorDaysTable {
  instrument: string;
  data_level: string;
  start_date: string;
  descriptor: string;
  files: number | string;
  latest_files: number | string;
}

/** The change log (migration 0011; src/catalog/change-log.ts): ids in commit order. */
export interface ChangesTable {
  /** bigserial in PostgreSQL (pg returns it as a string). */
  id: Generated<number | string>;
  time: string;
  change: string;
  file_path: string;
  /** JSON text of the record as the change left it. */
  record: string;
  /** Who may read the entry: 'public' (anyone) or 'team' (key holders), fixed at append (migration 0012). */
  audience: Generated<string>;
}

/** A numbered release (migration 0013; src/catalog/release-writes.ts). */
export interface ReleasesTable {
  number: number;
  title: string;
  description: string | null;
  /** `release` or `early-release`. */
  kind: string;
  /** When its files became, or become, public, ISO-8601 UTC. */
  release_date: string;
  created_by: string;
  created_at: string;
  /** BIGINT in PostgreSQL (pg returns it as a string). */
  file_count: number | string;
  bytes: number | string;
  retracted_date: string | null;
  retracted_reason: string | null;
  retracted_by: string | null;
}

/** A release's manifest: each file as it was when the release was made (migration 0013). */
export interface ReleaseFilesTable {
  release: number;
  file_path: string;
  size: number | string;
  sha256: string;
}

/** A file an audit began reading and has not recorded yet (migration 0014; src/catalog/audit-queue.ts). */
export interface AuditReadsTable {
  file_path: string;
  /** When the read began, ISO-8601 UTC. */
  started: string;
}

export interface CatalogDatabase {
  releases: ReleasesTable;
  release_files: ReleaseFilesTable;
  files: FilesTable;
  audit_reads: AuditReadsTable;
  changes: ChangesTable;
  coverage_days: CoverageDaysTable;
  descriptor_days: DescriptorDaysTable;
  api_keys: ApiKeysTable;
  name_leases: NameLeasesTable;
}
