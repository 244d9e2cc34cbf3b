import { SPEC_RECORD_FIELDS, isCalendarDate, isoDay, isVersion, missionExtensions, resolveRequestPath, type MissionConfig } from '../mission/index.js';
import { decodeCursor, MAX_PAGE_LIMIT, SORT_FIELDS, type QueryOptions, type QuerySort, type SortField } from './query-options.js';

/**
 * A validated query (docs/api.md, The three endpoints, plus the additive harvesting parameters).
 * Parsing and validating the query string lives here once, for every catalog adapter.
 */
export interface QueryFilter {
  readonly file_path?: string;
  readonly instrument?: string;
  readonly data_level?: string;
  readonly descriptor?: string;
  /** Bounds `YYYYMMDD`, inclusive: on the file's start date, or with `overlap` on its span. */
  readonly start_date?: string;
  readonly end_date?: string;
  /** Absent or `*` = any version; `latest` = each product's highest version. */
  readonly version?: string;
  readonly extension?: string;
  /** Bounds on when the file was indexed, ISO-8601 UTC, inclusive. */
  readonly ingestion_start?: string;
  readonly ingestion_end?: string;
  /** Select files whose [start_date, end_date] overlaps the date range. */
  readonly overlap?: boolean;
}

/**
 * The spec's parameters (4.3): one per field of a record (2.3), named alike. A request that
 * uses only these gets the spec's answer.
 */
const QUERY_PARAMETERS = SPEC_RECORD_FIELDS;

/** Additive parameters for harvesters and large archives. */
const EXTRA_QUERY_PARAMETERS = [
  'ingestion_start_date',
  'ingestion_end_date',
  'overlap',
  'limit',
  'cursor',
  'sort',
  'format',
] as const;

export const ALL_QUERY_PARAMETERS: readonly string[] = [...QUERY_PARAMETERS, ...EXTRA_QUERY_PARAMETERS];

export type QueryParameter = (typeof QUERY_PARAMETERS)[number] | (typeof EXTRA_QUERY_PARAMETERS)[number];

/** Representations of a query answer (`format=` or the Accept header). */
export const QUERY_FORMATS = ['json', 'csv', 'ndjson', 'metalink'] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

export type FilterResult =
  | { readonly ok: true; readonly filter: QueryFilter; readonly options: QueryOptions; readonly format?: QueryFormat }
  | { readonly ok: false; readonly message: string };

/** docs/api.md, Error codes. */
export function unknownParameterMessage(name: string): string {
  return `${name} is not a valid query parameter. Valid parameters are: ${ALL_QUERY_PARAMETERS.join(', ')}`;
}

const DESCRIPTOR = /^[A-Za-z0-9-]+$/;
// YYYYMMDD, or an ISO-8601 date-time with a zone (Z or ±hh:mm).
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Builds a filter from the query string's (name, value) pairs, in the order sent.
 * Unknown names, repeated names, empty and malformed values are refused with a message
 * that says what is expected; nothing is silently dropped or picked.
 */
export function parseQueryFilter(pairs: Iterable<readonly [string, string]>, mission: MissionConfig): FilterResult {
  const seen = new Map<QueryParameter, string>();
  for (const [name, value] of pairs) {
    if (!ALL_QUERY_PARAMETERS.includes(name)) return { ok: false, message: unknownParameterMessage(name) };
    if (seen.has(name as QueryParameter)) return { ok: false, message: `${name} was given more than once. Give each query parameter at most once.` };
    seen.set(name as QueryParameter, value);
  }
  const invalid = (name: string, value: string, expected: string): FilterResult => ({
    ok: false,
    message: `Invalid ${name} ${JSON.stringify(value)}: ${expected}`,
  });

  const filter: { -readonly [K in keyof QueryFilter]: QueryFilter[K] } = {};
  let limit: number | undefined;
  let cursor: string | undefined;
  let sort: QuerySort | undefined;
  let format: QueryFormat | undefined;
  for (const [name, value] of seen) {
    if (value === '') return invalid(name, value, 'expected a value; leave the parameter out to match any.');
    switch (name) {
      case 'ingestion_start_date':
      case 'ingestion_end_date': {
        const instant = parseInstant(value, name === 'ingestion_end_date');
        if (instant === undefined) {
          return invalid(name, value, 'expected YYYYMMDD or an ISO-8601 date-time with a zone, e.g. 20240105 or 2024-01-05T12:00:00Z.');
        }
        if (name === 'ingestion_start_date') filter.ingestion_start = instant;
        else filter.ingestion_end = instant;
        break;
      }
      case 'overlap':
        if (value !== 'true' && value !== 'false') return invalid(name, value, 'expected true or false.');
        filter.overlap = value === 'true';
        break;
      case 'limit':
        if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE_LIMIT) {
          return invalid(name, value, `expected a whole number from 1 to ${MAX_PAGE_LIMIT}.`);
        }
        limit = Number(value);
        break;
      case 'cursor':
        cursor = value;
        break;
      case 'sort': {
        const field = value.replace(/^-/, '');
        if (!(SORT_FIELDS as readonly string[]).includes(field)) {
          return invalid(name, value, `expected one of ${SORT_FIELDS.join(', ')}, with - in front for descending.`);
        }
        sort = { field: field as SortField, descending: value.startsWith('-') };
        break;
      }
      case 'format':
        if (!(QUERY_FORMATS as readonly string[]).includes(value)) return invalid(name, value, `expected one of ${QUERY_FORMATS.join(', ')}.`);
        format = value as QueryFormat;
        break;
      default: {
        const problem = checkSpecValue(name, value, mission);
        if (problem) return invalid(name, value, problem);
        filter[name] = name === 'file_path' ? canonicalPath(value, mission) : value;
      }
    }
  }
  if (filter.start_date && filter.end_date && filter.start_date > filter.end_date) {
    return { ok: false, message: `start_date ${filter.start_date} is after end_date ${filter.end_date}; expected start_date <= end_date.` };
  }
  if (filter.ingestion_start && filter.ingestion_end && filter.ingestion_start > filter.ingestion_end) {
    return { ok: false, message: 'ingestion_start_date is after ingestion_end_date; expected start <= end.' };
  }
  const options: { -readonly [K in keyof QueryOptions]: QueryOptions[K] } = {};
  if (sort) options.sort = sort;
  if (limit !== undefined) options.limit = limit;
  if (cursor !== undefined) {
    const position = decodeCursor(cursor, sort ?? { field: 'file_path', descending: false });
    if (typeof position === 'string') return invalid('cursor', cursor, position);
    options.after = position;
  }
  return { ok: true, filter, options, ...(format ? { format } : {}) };
}

/** The spec's eight parameters. */
function checkSpecValue(name: (typeof QUERY_PARAMETERS)[number], value: string, mission: MissionConfig): string | undefined {
  switch (name) {
    case 'instrument':
      return mission.instruments.includes(value) ? undefined : `expected one of ${mission.instruments.join(', ')}.`;
    case 'data_level':
      return mission.dataLevels.includes(value) ? undefined : `expected one of ${mission.dataLevels.join(', ')}.`;
    case 'extension': {
      const extensions = missionExtensions(mission);
      return extensions.includes(value) ? undefined : `expected one of ${extensions.join(', ')}.`;
    }
    case 'start_date':
    case 'end_date':
      return isCalendarDate(value) ? undefined : 'expected a real date in YYYYMMDD format, e.g. 20240105.';
    case 'version':
      return value === '*' || value === 'latest' || isVersion(value)
        ? undefined
        : 'expected vXX-YY (e.g. v00-01), * for any version, or latest for the highest version of each product.';
    case 'descriptor':
      return DESCRIPTOR.test(value) && value.length <= 255 ? undefined : 'expected letters, digits and hyphens, e.g. sci.';
    case 'file_path': {
      const resolved = resolveRequestPath(value, mission);
      if (resolved.kind === 'file') return undefined;
      if (resolved.kind === 'wrong_directory') return `expected the file's stored path ${resolved.expected}.`;
      if (resolved.kind === 'invalid_name') return resolved.message;
      return 'expected a stored path or file name, e.g. imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf.';
    }
  }
}

function canonicalPath(value: string, mission: MissionConfig): string {
  const resolved = resolveRequestPath(value, mission);
  return resolved.kind === 'file' ? resolved.path : value;
}

/**
 * An ingestion bound as an ISO-8601 UTC instant (how records store it). A bare date
 * covers its whole day: the start of the day as a lower bound, its end as an upper one.
 */
function parseInstant(value: string, upper: boolean): string | undefined {
  if (isCalendarDate(value)) {
    const day = isoDay(value);
    return upper ? `${day}T23:59:59.999Z` : `${day}T00:00:00.000Z`;
  }
  if (!ISO_DATE_TIME.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
