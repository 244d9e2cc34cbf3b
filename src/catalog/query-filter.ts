import { isCalendarDate, isVersion, missionExtensions, resolveRequestPath, type MissionConfig } from '../mission/index.js';

/**
 * A validated query (interface spec 4.3). Parsing and validating the query string
 * lives here once, for every catalog adapter.
 */
export interface QueryFilter {
  readonly file_path?: string;
  readonly instrument?: string;
  readonly data_level?: string;
  readonly descriptor?: string;
  /** Inclusive bounds on the file's start date, `YYYYMMDD`. */
  readonly start_date?: string;
  readonly end_date?: string;
  /** Absent or `*` = any version. */
  readonly version?: string;
  readonly extension?: string;
}

export const QUERY_PARAMETERS = [
  'file_path',
  'instrument',
  'data_level',
  'descriptor',
  'start_date',
  'end_date',
  'version',
  'extension',
] as const;

export type QueryParameter = (typeof QUERY_PARAMETERS)[number];

export type FilterResult =
  | { readonly ok: true; readonly filter: QueryFilter }
  | { readonly ok: false; readonly message: string };

/** Interface spec 7.3. */
export function unknownParameterMessage(name: string): string {
  return `${name} is not a valid query parameter. Valid parameters are: ${QUERY_PARAMETERS.join(', ')}`;
}

const DESCRIPTOR = /^[A-Za-z0-9-]+$/;

/**
 * Builds a filter from the query string's (name, value) pairs, in the order sent.
 * Unknown names, repeated names, empty and malformed values are refused with a message
 * that says what is expected; nothing is silently dropped or picked.
 */
export function parseQueryFilter(pairs: Iterable<readonly [string, string]>, mission: MissionConfig): FilterResult {
  const seen = new Map<string, string>();
  for (const [name, value] of pairs) {
    if (!(QUERY_PARAMETERS as readonly string[]).includes(name)) return { ok: false, message: unknownParameterMessage(name) };
    if (seen.has(name)) return { ok: false, message: `${name} was given more than once. Give each query parameter at most once.` };
    seen.set(name, value);
  }
  const filter: Record<string, string> = {};
  for (const [name, value] of seen) {
    const problem = checkValue(name as QueryParameter, value, mission);
    if (problem) return { ok: false, message: `Invalid ${name} ${JSON.stringify(value)}: ${problem}` };
    filter[name] = value;
  }
  if (filter.start_date && filter.end_date && filter.start_date > filter.end_date) {
    return { ok: false, message: `start_date ${filter.start_date} is after end_date ${filter.end_date}; expected start_date <= end_date.` };
  }
  if (filter.file_path) {
    const resolved = resolveRequestPath(filter.file_path, mission);
    if (resolved.kind === 'file') filter.file_path = resolved.path;
  }
  return { ok: true, filter };
}

function checkValue(name: QueryParameter, value: string, mission: MissionConfig): string | undefined {
  if (value === '') return 'expected a value; leave the parameter out to match any.';
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
      return value === '*' || isVersion(value) ? undefined : 'expected vXX-YY (e.g. v00-01), or * for any version.';
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
