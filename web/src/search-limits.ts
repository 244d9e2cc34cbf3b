import { MAX_PAGE_LIMIT } from '../../src/wire/query.js';

/**
 * Most records a search loads: one page of /query (`limit`, its largest), in path order,
 * with the number of matches in X-Total-Count. The table shows a page of them at a
 * time and sorts them by any column; past this many the page says how many matched in
 * all, so memory stays bounded whatever the archive holds.
 */
export const MAX_LOADED = MAX_PAGE_LIMIT;
