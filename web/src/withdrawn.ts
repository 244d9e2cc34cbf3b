import type { WireRecord } from '../../src/wire/record.js';

/**
 * Withdrawn files in the portal (docs/portal.md "Withdrawn files"; the API's side is docs/api.md
 * "Withdrawn files"): which records are, and which filters may be offered for download.
 */

export const isWithdrawn = (record: Pick<WireRecord, 'status'>): boolean => record.status === 'withdrawn';

/** True when a search asks for withdrawn files (`status=any` or `status=withdrawn`). */
export function showsWithdrawn(query: URLSearchParams): boolean {
  const status = query.get('status');
  return status === 'any' || status === 'withdrawn';
}

/**
 * The filters of a search's download actions (Metalink, `sdc download`): the same, but never
 * withdrawn files — so without `status`, whose default is archived files only; undefined when
 * the search asks for withdrawn files only, which are never offered for download.
 */
export function downloadableQuery(query: URLSearchParams): URLSearchParams | undefined {
  if (query.get('status') === 'withdrawn') return undefined;
  const params = new URLSearchParams(query);
  params.delete('status');
  return params;
}
