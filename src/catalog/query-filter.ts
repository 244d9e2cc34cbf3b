import { isCalendarDate, isVersion, missionExtensions, resolveRequestPath, storedPathPrefix, type MissionConfig } from '../mission/index.js';
import { parseInstant } from '../wire/instant.js';
import { isQueryParameter, QUERY_FORMATS, STATUS_CHOICES, QUERY_PARAMETER_ORDER, QUERY_PARAMETERS, type FilterValue, type ParameterKind, type QueryFilterName, type QueryFormat, type QueryParameterName } from '../wire/query.js';
import { decodeCursor, MAX_PAGE_LIMIT, SORT_FIELDS, type QueryOptions, type QuerySort, type SortField } from './query-options.js';

/**
 * A validated query (docs/api.md, The three endpoints, plus the additive harvesting parameters):
 * each filter parameter of src/wire/query.ts under its own name, its value as parsed
 * (FilterValue: instants as ISO-8601 UTC, `overlap` a boolean, `status` absent for archived).
 * Parsing and validating the query string lives here once, for every catalog adapter.
 */
export type QueryFilter = { readonly [K in QueryFilterName]?: FilterValue<(typeof QUERY_PARAMETERS)[K]['kind']> } & {
  /** Who reads (visibility-sql.ts): set by the service from the caller, never from the query string. */
  readonly audience?: Audience;
  /**
   * Which releases `release` may name (visibility-sql.ts): `published` for a caller without a
   * key, whatever the metadata setting, so a release not yet published (or retracted) answers
   * as a number never given. Set by the service from the caller, never from the query string.
   */
  readonly releases?: 'published';
  /**
   * The beginning every matching file's stored path has, by the mission's path rule
   * (withPathPrefix): redundant with `instrument` and `data_level`, it lets a page in path
   * order start its walk of the primary key at the instrument (filter-sql.ts, pathRangeWhere).
   * Set by parseQueryFilter from the mission, never from the query string.
   */
  readonly pathPrefix?: string;
};

/** Who reads: `public` (no key) sees the files whose release date has passed; absent, every file (docs/api.md "Who sees what"). */
export type Audience = 'public';

// Names, order, roles and patterns are declared once in src/wire/query.ts; this module checks values.
export { QUERY_FORMATS, type QueryFormat };

/** Every parameter in the declared order: the list the unknown-name message gives (docs/api.md). */
export const ALL_QUERY_PARAMETERS: readonly QueryParameterName[] = QUERY_PARAMETER_ORDER;

export type QueryParameter = QueryParameterName;

export type FilterResult =
  | { readonly ok: true; readonly filter: QueryFilter; readonly options: QueryOptions; readonly format?: QueryFormat }
  | { readonly ok: false; readonly message: string };

/** The 400 for an unknown name: it lists every valid one (docs/api.md "Error codes"). */
export function unknownParameterMessage(name: string): string {
  return `${name} is not a valid query parameter. Valid parameters are: ${ALL_QUERY_PARAMETERS.join(', ')}`;
}

const DESCRIPTOR = new RegExp(QUERY_PARAMETERS.descriptor.pattern);
const WHOLE_NUMBER = new RegExp(QUERY_PARAMETERS.limit.pattern);
const RELEASE_NUMBER = new RegExp(QUERY_PARAMETERS.release.pattern);

/**
 * Builds a filter from the query string's (name, value) pairs, in the order sent.
 * Unknown names, repeated names, empty and malformed values are refused with a message
 * that says what is expected; nothing is silently dropped or picked.
 */
export function parseQueryFilter(pairs: Iterable<readonly [string, string]>, mission: MissionConfig): FilterResult {
  const seen = new Map<QueryParameterName, string>();
  for (const [name, value] of pairs) {
    if (!isQueryParameter(name)) return { ok: false, message: unknownParameterMessage(name) };
    if (seen.has(name)) return { ok: false, message: `${name} was given more than once. Give each query parameter at most once.` };
    seen.set(name, value);
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
    const problem = VALUE_PROBLEMS[QUERY_PARAMETERS[name].kind](value, mission);
    if (problem) return invalid(name, value, problem);
    switch (name) {
      case 'ingestion_start_date':
        filter.ingestion_start_date = parseInstant(value);
        break;
      case 'ingestion_end_date':
        filter.ingestion_end_date = parseInstant(value, { end: true });
        break;
      case 'overlap':
        filter.overlap = value === 'true';
        break;
      case 'released':
        filter.released = value === 'true';
        break;
      case 'release':
        filter.release = value;
        break;
      case 'status':
        // archived is the default: left out, so a filter has one shape for it.
        if (value !== 'archived') filter.status = value as 'withdrawn' | 'any';
        break;
      case 'limit':
        limit = Number(value);
        break;
      case 'cursor':
        cursor = value;
        break;
      case 'sort':
        sort = { field: value.replace(/^-/, '') as SortField, descending: value.startsWith('-') };
        break;
      case 'format':
        format = value as QueryFormat;
        break;
      default:
        // The spec's eight: a field of the record each, matched as given (file_path as stored).
        filter[name] = name === 'file_path' ? canonicalPath(value, mission) : value;
    }
  }
  // A release's files are its manifest, withdrawn ones included, unless status= narrows them (docs/api.md "Releases").
  if (filter.release !== undefined && !seen.has('status')) filter.status = 'any';
  if (filter.start_date && filter.end_date && filter.start_date > filter.end_date) {
    return { ok: false, message: `start_date ${filter.start_date} is after end_date ${filter.end_date}; expected start_date <= end_date.` };
  }
  if (filter.ingestion_start_date && filter.ingestion_end_date && filter.ingestion_start_date > filter.ingestion_end_date) {
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
  return { ok: true, filter: withPathPrefix(filter, mission), options, ...(format ? { format } : {}) };
}

/**
 * The filter with the stored-path beginning its instrument (and data level) imply under the
 * mission's path rule (src/mission/stored-path.ts): every stored path is the record's own
 * (file-record.ts, recordFor), so the condition leaves the answer as it was (docs/scale.md,
 * "one instrument"). A filter without an instrument is left as it is.
 */
export function withPathPrefix(filter: QueryFilter, mission: MissionConfig): QueryFilter {
  if (filter.instrument === undefined) return filter;
  return { ...filter, pathPrefix: storedPathPrefix(mission.name, filter.instrument, filter.data_level) };
}

const oneOf = (values: readonly string[], value: string) => (values.includes(value) ? undefined : `expected one of ${values.join(', ')}.`);

/** Why a value of each kind (src/wire/query.ts) is refused, or undefined when it is taken. */
const VALUE_PROBLEMS: Readonly<Record<ParameterKind, (value: string, mission: MissionConfig) => string | undefined>> = {
  'stored-path': (value, mission) => {
    const resolved = resolveRequestPath(value, mission);
    if (resolved.kind === 'file') return undefined;
    if (resolved.kind === 'wrong_directory') return `expected the file's stored path ${resolved.expected}.`;
    if (resolved.kind === 'invalid_name') return resolved.message;
    return 'expected a stored path or file name, e.g. imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf.';
  },
  instrument: (value, mission) => oneOf(mission.instruments, value),
  'data-level': (value, mission) => oneOf(mission.dataLevels, value),
  extension: (value, mission) => oneOf(missionExtensions(mission), value),
  descriptor: (value) => (DESCRIPTOR.test(value) && value.length <= 255 ? undefined : 'expected letters, digits and hyphens, e.g. sci.'),
  date: (value) => (isCalendarDate(value) ? undefined : 'expected a real date in YYYYMMDD format, e.g. 20240105.'),
  version: (value) =>
    value === '*' || value === 'latest' || isVersion(value)
      ? undefined
      : 'expected vXX-YY (e.g. v00-01), * for any version, or latest for the highest version of each product.',
  instant: (value) =>
    parseInstant(value) === undefined
      ? 'expected YYYYMMDD or an ISO-8601 date-time with a zone, e.g. 20240105 or 2024-01-05T12:00:00Z.'
      : undefined,
  boolean: (value) => (value === 'true' || value === 'false' ? undefined : 'expected true or false.'),
  status: (value) => oneOf(STATUS_CHOICES, value),
  'release-number': (value) => (RELEASE_NUMBER.test(value) ? undefined : 'expected a release number, a whole number from 1 (GET /releases lists them).'),
  'page-size': (value) =>
    WHOLE_NUMBER.test(value) && Number(value) >= 1 && Number(value) <= MAX_PAGE_LIMIT ? undefined : `expected a whole number from 1 to ${MAX_PAGE_LIMIT}.`,
  // Decoded once the sort it belongs to is known (parseQueryFilter's end).
  cursor: () => undefined,
  sort: (value) =>
    (SORT_FIELDS as readonly string[]).includes(value.replace(/^-/, ''))
      ? undefined
      : `expected one of ${SORT_FIELDS.join(', ')}, with - in front for descending.`,
  format: (value) => oneOf(QUERY_FORMATS, value),
};

function canonicalPath(value: string, mission: MissionConfig): string {
  const resolved = resolveRequestPath(value, mission);
  return resolved.kind === 'file' ? resolved.path : value;
}
