import type { Kysely } from 'kysely';
import { storedRelease, type ReleaseDraft, type StoredRelease } from './release-manifests.js';
import type { CatalogDatabase } from './schema.js';

/*
 * A release asked for again (docs/api.md "Releases", *A repeated request*): a curator whose
 * POST /releases got no answer (a timeout, a connection lost after the commit) runs it again.
 * Releases are cited and never deleted, so a second, identical release would stay for good;
 * the repeat is answered with the release already made instead.
 */

/** How long after a release the same curator's identical request is taken for its repeat. */
export const REPEAT_WINDOW_MS = 10 * 60_000;

/** A release made, or the earlier one a repeated request was answered with (`repeat`). */
export interface CreatedRelease extends StoredRelease {
  readonly repeat?: true;
}

/**
 * The earlier release that `made` (just written in this transaction, under the releases' lock)
 * repeats: made by the same curator within REPEAT_WINDOW_MS, not retracted, with the same
 * title, description and kind, the same date (or both "now": a date not after its making) and
 * exactly the same manifest. The latest such, or undefined.
 */
export async function repeatedRelease(trx: Kysely<CatalogDatabase>, draft: ReleaseDraft, made: StoredRelease): Promise<StoredRelease | undefined> {
  const since = new Date(Date.parse(draft.created_at) - REPEAT_WINDOW_MS).toISOString();
  const now = draft.release_date <= draft.created_at;
  const row = await trx
    .selectFrom('releases as r')
    .selectAll('r')
    .where('r.number', '<', made.number)
    .where('r.created_by', '=', draft.created_by)
    .where('r.created_at', '>=', since)
    .where('r.retracted_date', 'is', null)
    .where('r.title', '=', draft.title)
    .where('r.kind', '=', draft.kind)
    .where((eb) => (draft.description === undefined ? eb('r.description', 'is', null) : eb('r.description', '=', draft.description)))
    .where((eb) => (now ? eb('r.release_date', '<=', eb.ref('r.created_at')) : eb('r.release_date', '=', draft.release_date)))
    .where('r.file_count', '=', made.file_count)
    // Same count, and no file of the new manifest missing from the earlier: the same manifest.
    .where(({ exists, not, selectFrom }) =>
      not(
        exists(
          selectFrom('release_files as mine')
            .select('mine.file_path')
            .where('mine.release', '=', made.number)
            .where(({ exists: present, not: absent, selectFrom: from }) =>
              absent(present(from('release_files as theirs').select('theirs.file_path').whereRef('theirs.release', '=', 'r.number').whereRef('theirs.file_path', '=', 'mine.file_path'))),
            ),
        ),
      ),
    )
    .orderBy('r.number', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && storedRelease(row);
}
