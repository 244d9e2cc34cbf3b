/**
 * The query parameters of GET /query, its limits and sort keys, as the server checks them
 * and the SDK, the `sdc` command and the portal send them. Imports nothing (browser-safe).
 */
import { SPEC_RECORD_FIELDS } from './record.js';

/** The spec's filters (4.3): one per metadata field. */
const SPEC_QUERY_PARAMETERS = SPEC_RECORD_FIELDS;

/** The archive's additive filters (docs/query.md). */
const EXTRA_FILTERS = ['ingestion_start_date', 'ingestion_end_date', 'overlap'] as const;

/** Paging, order and representation of the answer. */
export const ANSWER_PARAMETERS = ['sort', 'limit', 'cursor', 'format'] as const;

/** Every parameter, in the order clients send them (stable URLs, easy to read in logs). */
export const QUERY_PARAMETER_ORDER = [...SPEC_QUERY_PARAMETERS, ...EXTRA_FILTERS, ...ANSWER_PARAMETERS] as const;

/** Orders a query may ask for (`sort=`); `-` in front means descending; file_path breaks ties. */
export const SORT_FIELDS = ['file_path', 'start_date', 'ingestion_date'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SortKey = SortField | `-${SortField}`;

/** Largest page (`limit`) a client may ask for: pages are held in memory to compute the next cursor. */
export const MAX_PAGE_LIMIT = 10_000;
