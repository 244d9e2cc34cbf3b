import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AccessPolicy } from '../mission/index.js';
import type { CatalogDialect } from './catalog-dialect.js';
import { policyDateSql } from './policy-sql.js';
import { lockReleases, storedRelease, type Retraction, type RetractOutcome } from './release-manifests.js';
import type { CatalogDatabase } from './schema.js';

/*
 * A release's retraction (docs/api.md "Releases"), one set-based statement per step, whatever
 * the manifest's size: each file the release made public returns to the earliest date another
 * release that is not retracted gives it, or the policy's own (policy-sql.ts), or none (the
 * team's). The files the public loses are noted in a temporary table, from which the
 * post-write step appends their 'retracted' entries (change-log.ts, post-write.ts). Run inside
 * a SqlCatalog transaction.
 */

/** The temporary table of the paths the public loses (per connection; emptied before each use, and at commit on PostgreSQL). */
export const LOST_TABLE = 'sdc_retract_lost';

/** The other release (not retracted) that would give a files row its earliest date: its `column`. */
function otherRelease(number: number, column: 'release_date' | 'number'): RawBuilder<string | number | null> {
  return sql`(SELECT releases.${sql.ref(column)} FROM release_files JOIN releases ON releases.number = release_files.release
    WHERE release_files.file_path = files.file_path AND releases.number <> ${number} AND releases.retracted_date IS NULL
    ORDER BY releases.release_date, releases.number LIMIT 1)`;
}

/** Empties (SQLite: makes, if need be, then empties) the temporary table, in this connection. */
async function freshLostTable(trx: Kysely<CatalogDatabase>, dialect: CatalogDialect): Promise<void> {
  if (dialect.engine === 'postgres') {
    await sql`CREATE TEMP TABLE IF NOT EXISTS ${sql.raw(LOST_TABLE)} (file_path text COLLATE "C" PRIMARY KEY) ON COMMIT DELETE ROWS`.execute(trx);
  } else {
    await sql`CREATE TEMP TABLE IF NOT EXISTS ${sql.raw(LOST_TABLE)} (file_path TEXT PRIMARY KEY)`.execute(trx);
  }
  await sql`DELETE FROM ${sql.raw(LOST_TABLE)}`.execute(trx);
}

/**
 * Retracts a release: its row marked (once: a second retraction changes nothing), its files
 * given their new date and release. Answers the outcome and how many files the public lost
 * (their paths in LOST_TABLE, for the caller's post-write step).
 */
export async function retractRelease(
  trx: Kysely<CatalogDatabase>,
  dialect: CatalogDialect,
  number: number,
  retraction: Retraction,
  policy: AccessPolicy,
): Promise<{ readonly outcome: RetractOutcome; readonly lost: number }> {
  await lockReleases(trx, dialect);
  const updated = await trx
    .updateTable('releases')
    .set({ retracted_date: retraction.date, retracted_reason: retraction.reason, retracted_by: retraction.by })
    .where('number', '=', number)
    .where('retracted_date', 'is', null)
    .executeTakeFirst();
  const row = await trx.selectFrom('releases').selectAll().where('number', '=', number).executeTakeFirst();
  if (row === undefined) return { outcome: { outcome: 'not_found' }, lost: 0 };
  if (Number(updated.numUpdatedRows) === 0) return { outcome: { outcome: 'already_retracted', release: storedRelease(row) }, lost: 0 };
  const now = retraction.date;
  // The files this release gave their date: in its manifest, with its date, named by it (or by none while it was scheduled).
  const made = sql<boolean>`files.file_path IN (SELECT release_files.file_path FROM release_files WHERE release_files.release = ${number})
    AND files.release_date = ${row.release_date} AND (files.release = ${number} OR files.release IS NULL)`;
  const policyDate = policyDateSql(policy, dialect.engine);
  const otherDate = otherRelease(number, 'release_date');
  const byRelease = sql<boolean>`(${otherDate} IS NOT NULL AND (${policyDate} IS NULL OR ${otherDate} < ${policyDate}))`;
  const next = sql<string | null>`(CASE WHEN ${byRelease} THEN ${otherDate} ELSE ${policyDate} END)`;
  // A withdrawn file the public loses is never released again (release-writes.ts, withdrawnReleaseColumns).
  const date = sql<string | null>`(CASE WHEN files.status IS NULL OR ${next} <= ${now} THEN ${next} END)`;
  const publicAfter = sql<boolean>`(CASE WHEN ${date} <= ${now} THEN 1 ELSE 0 END) = 1`;
  let lost = 0;
  // The public could see these files (the release was published): those it loses get a 'retracted' entry.
  if (row.release_date <= now) {
    await freshLostTable(trx, dialect);
    const noted = await sql`INSERT INTO ${sql.raw(LOST_TABLE)} (file_path) SELECT files.file_path FROM files WHERE ${made} AND NOT ${publicAfter}`.execute(trx);
    lost = Number(noted.numAffectedRows ?? 0);
  }
  await trx
    .updateTable('files')
    .set({
      release_date: date,
      // A record names a release once it has published the file (release-manifests.ts, insertRelease).
      release: sql<number | null>`(CASE WHEN ${byRelease} AND ${otherDate} <= ${now} THEN ${otherRelease(number, 'number')} END)`,
      // A file the public does not see now gets its 'released' entry again when its date comes.
      release_logged: sql<number | null>`(CASE WHEN ${publicAfter} THEN release_logged END)`,
    })
    .where(made)
    .execute();
  return { outcome: { outcome: 'retracted', release: storedRelease(row) }, lost };
}
