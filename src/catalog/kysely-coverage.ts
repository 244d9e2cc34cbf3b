import type { Kysely } from 'kysely';
import type { CoverageDay } from './coverage-day.js';
import { applyFilter } from './kysely-filter.js';
import type { QueryFilter } from './query-filter.js';
import type { CatalogDatabase } from './schema.js';

/**
 * Coverage: the matching files grouped by (instrument, data_level, start_date), in that
 * order, keyset-paged `pageSize` groups per round trip like a query.
 */
export async function* coverageDays(db: Kysely<CatalogDatabase>, filter: QueryFilter, pageSize: number): AsyncIterable<CoverageDay> {
  let after: readonly [string, string, string] | undefined;
  for (;;) {
    let q = applyFilter(db.selectFrom('files'), filter);
    if (after !== undefined) {
      const [instrument, level, start] = after;
      q = q.where((eb) =>
        eb(eb.refTuple('files.instrument', 'files.data_level', 'files.start_date'), '>', eb.tuple(instrument, level, start)),
      );
    }
    const rows = await q
      .select((eb) => [
        'files.instrument',
        'files.data_level',
        'files.start_date',
        eb.fn.max('files.end_date').as('end_date'),
        eb.fn.countAll().as('files'),
        eb.fn.sum('files.size').as('size'),
      ])
      .groupBy(['files.instrument', 'files.data_level', 'files.start_date'])
      .orderBy('files.instrument')
      .orderBy('files.data_level')
      .orderBy('files.start_date')
      .limit(pageSize)
      .execute();
    for (const row of rows) {
      // COUNT and SUM come back as strings from PostgreSQL (bigint/numeric).
      yield { ...row, end_date: String(row.end_date), files: Number(row.files), size: Number(row.size) };
    }
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    after = [last.instrument, last.data_level, last.start_date];
  }
}
