import { QUERY_PARAMETER_ORDER, RECORD_FIELDS, SPEC_RECORD_FIELDS, type RecordField, type SortKey, type SpecRecordField, type StatusChoice, type WireRecord } from '../wire/index.js';

/**
 * What the query endpoint answers, as the client sees it on the wire: the fields of
 * docs/api.md, The record, then what this archive adds (a spec-only server may leave them out).
 * Defined once, in src/wire/record.ts, for the server, the SDK, the CLI and the portal.
 */
export type ArchiveRecord = WireRecord;

/** The spec's fields (2.3) in its order: the table's columns. */
export const SPEC_FIELDS = SPEC_RECORD_FIELDS;

/** Every field, for json and csv output. */
export const ALL_FIELDS = RECORD_FIELDS;

export type { RecordField };

/**
 * Filters of a query (docs/api.md, The three endpoints, plus the archive's additive ones); the live
 * feed takes the same. The server validates the values and says what it expected.
 */
export interface QueryFilter extends Partial<Record<SpecRecordField, string>> {
  /** `vXX-YY`, `*` for any version, or `latest` for each product's highest version. */
  readonly version?: string;
  /** Indexed at or after: `YYYYMMDD` (the day's start, UTC), an ISO-8601 date-time with a zone, or a Date. */
  readonly ingestion_start_date?: string | Date;
  /** Indexed at or before: `YYYYMMDD` (the day's end, UTC), an ISO-8601 date-time with a zone, or a Date. */
  readonly ingestion_end_date?: string | Date;
  /** `start_date`/`end_date` select files whose [start, end] span meets the range (default: the start date bounds). */
  readonly overlap?: boolean;
  /** `archived` (the server's default), `withdrawn` (only withdrawn files) or `any` (docs/api.md "Withdrawn files"). */
  readonly status?: StatusChoice;
  /** true: only files whose release date has passed; false: only team-only ones (a key's holder; docs/api.md "Who sees what"). */
  readonly released?: boolean;
  /** Only the files of this release: exactly its manifest, whatever happened since (docs/api.md "Releases"). */
  readonly release?: number;
}

/** Orders of a query; `-` in front for descending, `file_path` breaks ties. */
export type QuerySort = SortKey;

/** A query: filters, and the paging and order of the answer. */
export interface QueryParameters extends QueryFilter {
  /** Answer one page of at most this many records (1 to MAX_PAGE_LIMIT, 10000). */
  readonly limit?: number;
  /** Continue after the page that handed it out (its `nextCursor`). */
  readonly cursor?: string;
  readonly sort?: QuerySort;
}

/** Names in the order they are sent (stable URLs, easy to read in logs); the SDK never sends `format`. */
const PARAMETER_ORDER = QUERY_PARAMETER_ORDER.filter((name) => name !== 'format') as readonly Exclude<(typeof QUERY_PARAMETER_ORDER)[number], 'format'>[];

/** `?instrument=swe&start_date=20240101`, empty values and `overlap: false` left out (`released: false` is sent). */
export function queryString(query: QueryParameters): string {
  const params = new URLSearchParams();
  for (const name of PARAMETER_ORDER) {
    const value = query[name];
    if (value === undefined || value === '' || (value === false && name !== 'released')) continue;
    params.append(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Checks one element of the answer enough that the code after it can rely on its shape. */
export function isArchiveRecord(value: unknown): value is ArchiveRecord {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as Record<string, unknown>;
  return (
    SPEC_FIELDS.every((f) => typeof o[f] === 'string') &&
    (o.size === undefined || typeof o.size === 'number') &&
    (o.sha256 === undefined || typeof o.sha256 === 'string') &&
    (o.uploader === undefined || typeof o.uploader === 'string')
  );
}
