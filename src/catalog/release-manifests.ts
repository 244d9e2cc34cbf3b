import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { CatalogDialect } from './catalog-dialect.js';
import { numbered, whereOf } from './filter-sql.js';
import type { QueryFilter } from './query-filter.js';
import type { CatalogDatabase, ReleasesTable } from './schema.js';
import type { ManifestEntry, ReleaseFacts, ReleaseKind } from '../wire/release.js';

/*
 * Numbered releases in the catalog (docs/api.md "Releases"): a release's row and its manifest
 * (migration 0013), made inside a SqlCatalog transaction (retracted: release-retraction.ts). A manifest is written
 * by INSERT ... SELECT from the files table, never gathered in memory; a release's number is the
 * next one, given under a lock (PostgreSQL: a transaction-level advisory lock; SQLite writes one
 * transaction at a time), so two curators at once get two numbers.
 */

/** The releases' advisory lock on PostgreSQL ("sdc-rels" as a 64-bit integer; used for nothing else). */
const RELEASE_LOCK = '8314879857946683763';

/** Paths per statement where a list is written into SQL. */
const PATH_BATCH = 500;

/** What a release is made of: the paths named (checked by the service), or a query's files; then the paths excluded. */
export type ManifestSource = { readonly paths: readonly string[] } | { readonly filter: QueryFilter };

/** A release to make: its description, its date (already now or later), who makes it. */
export interface ReleaseDraft extends ReleaseFacts {
  readonly source: ManifestSource;
  readonly exclude: readonly string[];
}

/** A release as stored: its row, counts as numbers. */
export interface StoredRelease extends ReleaseFacts {
  readonly number: number;
  readonly file_count: number;
  readonly bytes: number;
  readonly retracted_date?: string;
  readonly retracted_reason?: string;
  readonly retracted_by?: string;
}

/** A retraction: when, why, by whom. */
export interface Retraction {
  readonly date: string;
  readonly reason: string;
  readonly by: string;
}

/** How a retraction ended: the release as it now is, or why nothing changed. */
export type RetractOutcome =
  | { readonly outcome: 'retracted'; readonly release: StoredRelease }
  | { readonly outcome: 'not_found' }
  | { readonly outcome: 'already_retracted'; readonly release: StoredRelease };

export function storedRelease(row: ReleasesTable): StoredRelease {
  return {
    number: Number(row.number),
    title: row.title,
    ...(row.description !== null ? { description: row.description } : {}),
    kind: row.kind as ReleaseKind,
    release_date: row.release_date,
    created_by: row.created_by,
    created_at: row.created_at,
    file_count: Number(row.file_count),
    bytes: Number(row.bytes),
    ...(row.retracted_date !== null ? { retracted_date: row.retracted_date } : {}),
    ...(row.retracted_reason !== null ? { retracted_reason: row.retracted_reason } : {}),
    ...(row.retracted_by !== null ? { retracted_by: row.retracted_by } : {}),
  };
}

/** Runs `?`-placeholder SQL in the transaction, numbered for PostgreSQL. */
async function run(trx: Kysely<CatalogDatabase>, dialect: CatalogDialect, text: string, params: readonly unknown[]): Promise<void> {
  await trx.executeQuery(CompiledQuery.raw(dialect.engine === 'postgres' ? numbered(text) : text, [...params]));
}

/** Takes the releases' lock (PostgreSQL; SQLite's write transactions are serialised already). */
export async function lockReleases(trx: Kysely<CatalogDatabase>, dialect: CatalogDialect): Promise<void> {
  if (dialect.engine === 'postgres') await sql`SELECT pg_advisory_xact_lock(${sql.raw(RELEASE_LOCK)})`.execute(trx);
}

/**
 * Writes a release's row and manifest: the next number, the manifest from the source (archived
 * files only), less the excluded paths. Answers it, or undefined when its manifest is empty
 * (the caller rolls back).
 */
export async function insertRelease(trx: Kysely<CatalogDatabase>, dialect: CatalogDialect, draft: ReleaseDraft): Promise<StoredRelease | undefined> {
  await lockReleases(trx, dialect);
  const last = await trx.selectFrom('releases').select((eb) => eb.fn.max('number').as('last')).executeTakeFirst();
  const number = Number(last?.last ?? 0) + 1;
  const into = 'INSERT INTO release_files (release, file_path, size, sha256) SELECT ?, files.file_path, files.size, files.sha256 FROM files WHERE ';
  if ('paths' in draft.source) {
    for (let i = 0; i < draft.source.paths.length; i += PATH_BATCH) {
      const batch = draft.source.paths.slice(i, i + PATH_BATCH);
      // ON CONFLICT: a path named twice is in the manifest once.
      await run(trx, dialect, `${into}files.file_path IN (${batch.map(() => '?').join(', ')}) AND files.status IS NULL ON CONFLICT DO NOTHING`, [number, ...batch]);
    }
  } else {
    // Withdrawn files never enter a release, whatever status the query named.
    const params: unknown[] = [number];
    const where = whereOf({ ...draft.source.filter, audience: undefined }, params);
    await run(trx, dialect, `${into}${[...where, 'files.status IS NULL'].join(' AND ')}`, params);
  }
  // Excluded after the selection (the latest version of each product was chosen first).
  for (let i = 0; i < draft.exclude.length; i += PATH_BATCH) {
    await trx.deleteFrom('release_files').where('release', '=', number).where('file_path', 'in', draft.exclude.slice(i, i + PATH_BATCH)).execute();
  }
  const totals = await trx
    .selectFrom('release_files')
    .select((eb) => [eb.fn.countAll().as('files'), eb.fn.sum('size').as('bytes')])
    .where('release', '=', number)
    .executeTakeFirstOrThrow();
  if (Number(totals.files) === 0) return undefined;
  const row: ReleasesTable = {
    number,
    title: draft.title,
    description: draft.description ?? null,
    kind: draft.kind,
    release_date: draft.release_date,
    created_by: draft.created_by,
    created_at: draft.created_at,
    file_count: Number(totals.files),
    bytes: Number(totals.bytes ?? 0),
    retracted_date: null,
    retracted_reason: null,
    retracted_by: null,
  };
  await trx.insertInto('releases').values(row).execute();
  // Its files are public from its date, where they were not earlier (a file public already keeps its date).
  // A record names its release once that release has published it: a scheduled one's number is set
  // when its date comes (release-writes.ts, announceDue), so no record tells of it before.
  const published = draft.release_date <= new Date().toISOString();
  await trx
    .updateTable('files')
    .set({ release_date: draft.release_date, release: published ? number : null, release_logged: null })
    .where('file_path', 'in', (eb) => eb.selectFrom('release_files').select('file_path').where('release', '=', number))
    .where((eb) => eb.or([eb('release_date', 'is', null), eb('release_date', '>', draft.release_date)]))
    .execute();
  return storedRelease(row);
}

/** A page of a release's manifest in file_path order, after `after`. */
export async function manifestPage(db: Kysely<CatalogDatabase>, number: number, after: string | undefined, limit: number): Promise<ManifestEntry[]> {
  let q = db.selectFrom('release_files').select(['file_path', 'size', 'sha256']).where('release', '=', number);
  if (after !== undefined) q = q.where('file_path', '>', after);
  const rows = await q.orderBy('file_path').limit(limit).execute();
  return rows.map((r) => ({ file_path: r.file_path, size: Number(r.size), sha256: r.sha256 }));
}
