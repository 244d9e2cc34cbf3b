import { sql, type Kysely } from 'kysely';
import { newChange, type NewChange } from './change-log.js';
import type { FileRecord } from './file-record.js';
import { RECORD_COLUMNS, recordOfRow } from './record-columns.js';
import type { CatalogDatabase } from './schema.js';

/*
 * Writes that change who sees a file (docs/api.md "Who sees what", "Releases"): a release sets
 * its files' release date, and the 'released' change of each team file whose date has come is
 * logged once, by whichever instance gets there first. Run inside a SqlCatalog transaction.
 */

const RECORD_COLUMN_NAMES = RECORD_COLUMNS.map((c) => c.field);

/** Paths per statement where a list of paths is written into SQL. */
export const PATH_PAGE = 500;

/** A path a release may not hold, and why. */
export interface Unreleasable {
  readonly path: string;
  readonly why: 'unknown' | 'withdrawn';
}

/**
 * Of `paths` (a release's files, by the curator), those that are unknown or withdrawn, in the
 * order named: one `IN (...)` read per page of PATH_PAGE paths, so a release of many thousand
 * files is checked in a few statements (docs/performance.md).
 */
export async function unreleasable(db: Kysely<CatalogDatabase>, paths: readonly string[]): Promise<Unreleasable[]> {
  const refused: Unreleasable[] = [];
  for (let i = 0; i < paths.length; i += PATH_PAGE) {
    const page = paths.slice(i, i + PATH_PAGE);
    const rows = await db.selectFrom('files').select(['file_path', 'status']).where('file_path', 'in', [...new Set(page)]).execute();
    const status = new Map(rows.map((r) => [r.file_path, r.status]));
    for (const path of page) {
      if (!status.has(path)) refused.push({ path, why: 'unknown' });
      else if (status.get(path) === 'withdrawn') refused.push({ path, why: 'withdrawn' });
    }
  }
  return refused;
}

/** 'released' entries written per transaction by the background step. */
export const ANNOUNCE_BATCH = 500;

/**
 * Gives `paths` the release date `releaseDate` (and `release`, its number) where they were not
 * public earlier: a file already public keeps its date and number. Answers how many changed.
 */
export async function setReleaseDate(trx: Kysely<CatalogDatabase>, paths: readonly string[], releaseDate: string, release?: number): Promise<number> {
  let changed = 0;
  for (let i = 0; i < paths.length; i += PATH_PAGE) {
    const result = await trx
      .updateTable('files')
      .set({ release_date: releaseDate, release: release ?? null, release_logged: null })
      .where('file_path', 'in', paths.slice(i, i + PATH_PAGE))
      .where((eb) => eb.or([eb('release_date', 'is', null), eb('release_date', '>', releaseDate)]))
      .executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}

/**
 * The release that published a file whose date has come: the one (not retracted) whose date is
 * the file's, if any (an embargo's end has none). Set then, not when a scheduled release is made,
 * so no record names a release before it is published (release-manifests.ts, insertRelease).
 */
const publishedBy = sql<number | null>`COALESCE(release, (SELECT min(releases.number) FROM release_files JOIN releases ON releases.number = release_files.release WHERE release_files.file_path = files.file_path AND releases.release_date = files.release_date AND releases.retracted_date IS NULL))`;

/**
 * Logs the 'released' change of team files whose release date has passed (`now`), at most
 * ANNOUNCE_BATCH: a file that was public from its ingestion (its date is its ingestion date)
 * has its 'created' entry public already. The UPDATE marks each row once: of two instances
 * running this at once, PostgreSQL's row locks let one mark a row, and SQLite writes one at a
 * time, so each file's entry is written once. Answers the entries, for the caller's post-write
 * step (post-write.ts) to append as its transaction's last statements.
 */
export async function announceDue(trx: Kysely<CatalogDatabase>, now: string): Promise<NewChange[]> {
  const due = trx
    .selectFrom('files')
    .select('file_path')
    .where('release_logged', 'is', null)
    .where('release_date', '<=', now)
    .whereRef('release_date', '>', 'ingestion_date')
    .orderBy('release_date')
    .limit(ANNOUNCE_BATCH);
  const rows = await trx
    .updateTable('files')
    .set({ release_logged: 1, release: publishedBy })
    .where('file_path', 'in', due)
    .where('release_logged', 'is', null)
    .returning(RECORD_COLUMN_NAMES)
    .execute();
  const records: FileRecord[] = rows
    .map((row) => recordOfRow(RECORD_COLUMN_NAMES.map((name) => (row as Record<string, unknown>)[name])))
    .sort((a, b) => (a.release_date! < b.release_date! ? -1 : a.release_date! > b.release_date! ? 1 : a.file_path < b.file_path ? -1 : 1));
  return records.map((record) => newChange('released', record, 'public'));
}

/**
 * A withdrawal's part (docs/api.md "Who sees what"): a file the public could not see yet never
 * reaches it, so its release date and number are cleared with the withdrawal (the columns to set,
 * with the withdrawal's UPDATE); a file the public sees keeps them. With no date, no read shows
 * it to a caller without a key and announceDue never logs its 'released' entry.
 */
export function withdrawnReleaseColumns(now: string) {
  return {
    release_date: sql<string | null>`CASE WHEN release_date <= ${now} THEN release_date END`,
    release: sql<number | null>`CASE WHEN release_date <= ${now} THEN release END`,
  };
}

/**
 * The 'released' entry of a file about to be withdrawn whose date has come but which the
 * background step has not announced yet: logged before its withdrawal's (public too), so a
 * harvester without a key meets the file before its withdrawal. Run before the withdrawal's UPDATE.
 */
export async function announceBeforeWithdrawal(trx: Kysely<CatalogDatabase>, filePath: string, now: string): Promise<NewChange[]> {
  const rows = await trx
    .updateTable('files')
    .set({ release_logged: 1 })
    .where('file_path', '=', filePath)
    .where('release_logged', 'is', null)
    .where('release_date', '<=', now)
    .whereRef('release_date', '>', 'ingestion_date')
    .where('status', 'is', null)
    .returning(RECORD_COLUMN_NAMES)
    .execute();
  return rows.map((row) => newChange('released', recordOfRow(RECORD_COLUMN_NAMES.map((name) => (row as Record<string, unknown>)[name])), 'public'));
}
