import { archivedSql } from './archived-sql.js';
import type { Audience, QueryFilter } from './query-filter.js';

/*
 * THE visibility rule in SQL (docs/api.md "Who sees what"): a caller without a key sees a file
 * only once its release date has passed. Every read of the files table (query pages in every
 * format, counts, coverage, the live feed's and the change log's filters) takes its WHERE from
 * filter-sql.ts's whereOf, which takes this fragment, so no read can leave it out. The caller's
 * standing reaches the catalog as the filter's `audience`, set by the service from the request
 * (src/service/visibility.ts), never as a filter applied to rows already read. ISO-8601 UTC
 * texts compare as instants; the release date is in SQLite's covering index (files_search)
 * and PostgreSQL's files_release_date. `?` placeholders, as filter-sql.ts.
 */

export type { Audience };

/** The conditions of the filter's audience and `released=`, with their parameters pushed on `params`. */
export function visibilityWhere(filter: QueryFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const now = new Date().toISOString();
  if (filter.audience === 'public' || filter.released === true) {
    where.push('files.release_date <= ?');
    params.push(now);
  }
  if (filter.released === false) {
    where.push('(files.release_date IS NULL OR files.release_date > ?)');
    params.push(now);
  }
  return where;
}

/**
 * `version=latest`: each product's highest archived version; for the public, the highest of the
 * versions it may see (a team-only newer version neither shows nor hides the public one). The
 * product's versions are found by files_product_version. A row flagged latest has no newer
 * archived version at all, so only the others are looked up (docs/performance.md "Who sees
 * what at scale": the look-up on every row cost PostgreSQL 1.4-2.2x today's read).
 */
export function latestWhere(filter: QueryFilter, params: unknown[]): string {
  // Kept at ingest, in the same transaction as the write (product-refresh.ts).
  if (filter.audience !== 'public') return 'files.is_latest = 1';
  params.push(new Date().toISOString());
  return (
    `${archivedSql('files')} AND (files.is_latest = 1 OR NOT EXISTS (SELECT 1 FROM files AS newer WHERE newer.instrument = files.instrument` +
    ' AND newer.data_level = files.data_level AND newer.descriptor = files.descriptor AND newer.start_date = files.start_date' +
    ` AND newer.version > files.version AND ${archivedSql('newer')} AND newer.release_date <= ?))`
  );
}

/**
 * `release=N`: the files of release N's manifest. For a caller limited to published releases
 * (the filter's `releases`), only while N is published (its date passed, not retracted):
 * otherwise nothing, as for a number never given (docs/api.md "Releases").
 */
export function releaseWhere(filter: QueryFilter, release: string, params: unknown[]): string {
  params.push(Number(release));
  if (filter.releases !== 'published') return 'files.file_path IN (SELECT release_files.file_path FROM release_files WHERE release_files.release = ?)';
  params.push(new Date().toISOString());
  return (
    'files.file_path IN (SELECT release_files.file_path FROM release_files JOIN releases ON releases.number = release_files.release' +
    ' WHERE release_files.release = ? AND releases.release_date <= ? AND releases.retracted_date IS NULL)'
  );
}
