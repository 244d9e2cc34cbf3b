import { DATE_TIME_PATTERN } from './instant.js';
/**
 * The query parameters of GET /query, declared once: names, order, roles, value kinds and
 * patterns. The parser (src/catalog/query-filter.ts), the OpenAPI schemas
 * (src/http/query-schemas.ts), /coverage, /events, the SDK, the `sdc` command and the portal
 * derive theirs from here (docs/query.md lists them). Imports nothing but the wire record
 * (browser-safe).
 */
import type { SpecRecordField } from './record.js';

/** Orders a query may ask for (`sort=`); `-` in front means descending; file_path breaks ties. */
export const SORT_FIELDS = ['file_path', 'start_date', 'ingestion_date'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SortKey = SortField | `-${SortField}`;

/** Largest page (`limit`) a client may ask for: pages are held in memory to compute the next cursor. */
export const MAX_PAGE_LIMIT = 10_000;

/** Representations of a query answer (`format=` or the Accept header). */
export const QUERY_FORMATS = ['json', 'csv', 'ndjson', 'metalink'] as const;
export type QueryFormat = (typeof QUERY_FORMATS)[number];

/** Which files a filter selects by their status (`status=`): archived ones unless asked (docs/api.md "Withdrawn files"). */
export const STATUS_CHOICES = ['archived', 'withdrawn', 'any'] as const;
export type StatusChoice = (typeof STATUS_CHOICES)[number];

/**
 * What a parameter does: a `filter` selects files (GET /query, /events and /coverage take it);
 * an `answer` parameter shapes /query's answer (its page, order, representation) and nothing else.
 */
export type ParameterRole = 'filter' | 'answer';

/** How a value is read; the parser has one check per kind, the OpenAPI schema one description. */
export type ParameterKind =
  | 'stored-path'
  | 'instrument'
  | 'data-level'
  | 'extension'
  | 'descriptor'
  | 'date'
  | 'version'
  | 'instant'
  | 'boolean'
  | 'status'
  | 'release-number'
  | 'page-size'
  | 'cursor'
  | 'sort'
  | 'format';

export interface QueryParameterRule {
  readonly role: ParameterRole;
  readonly kind: ParameterKind;
  /** Named by the interface spec (docs/api.md "The three endpoints"): one per field of the record. */
  readonly spec: boolean;
  /**
   * A pattern every accepted value matches (ECMAScript syntax, as JSON Schema takes it). The
   * parser checks more (real dates, the mission's values), never less.
   */
  readonly pattern?: string;
  readonly description: string;
  readonly examples?: readonly string[];
  /**
   * A filter's `sdc` flag (query, download --query, watch) and its help, where not the default:
   * `--<name with hyphens> <value>` (a boolean: no value) described as above.
   */
  readonly cli?: { readonly flag: string; readonly help: string };
}

const DATE = '^\\d{8}$';
/** YYYYMMDD, or an ISO-8601 date-time with a zone (Z or ±hh:mm). */
const INSTANT = `^(\\d{8}|${DATE_TIME_PATTERN})$`;

/**
 * Every parameter, in the order of the spec's 400 message for an unknown name ("Valid
 * parameters are: ..."): the spec's eight in the record's order, then this archive's additive
 * filters, then the answer's paging, order and format. Clients send them in this order too.
 */
export const QUERY_PARAMETERS = {
  file_path: { role: 'filter', kind: 'stored-path', spec: true, description: 'Stored path or file name.', cli: { flag: '--file-path <path>', help: 'one file: stored path or file name' } },
  instrument: { role: 'filter', kind: 'instrument', spec: true, description: 'Instrument, as in the file name.', cli: { flag: '--instrument <name>', help: 'instrument, e.g. swe' } },
  data_level: { role: 'filter', kind: 'data-level', spec: true, description: 'Data level, as in the file name.', cli: { flag: '--data-level <level>', help: 'data level, e.g. l1a' } },
  descriptor: {
    role: 'filter',
    kind: 'descriptor',
    spec: true,
    pattern: '^[A-Za-z0-9-]+$',
    description: 'e.g. sci.',
    examples: ['sci'],
    cli: { flag: '--descriptor <descriptor>', help: 'descriptor, e.g. sci' },
  },
  start_date: {
    role: 'filter',
    kind: 'date',
    spec: true,
    pattern: DATE,
    description: 'YYYYMMDD: files whose start date is on or after it (with overlap, whose span meets the range).',
    examples: ['20240101'],
    cli: { flag: '--start-date <YYYYMMDD>', help: 'files starting on or after this day, YYYYMMDD or YYYY-MM-DD (with --overlap: ending on or after)' },
  },
  end_date: {
    role: 'filter',
    kind: 'date',
    spec: true,
    pattern: DATE,
    description: 'YYYYMMDD: files whose start date is on or before it.',
    examples: ['20241231'],
    cli: { flag: '--end-date <YYYYMMDD>', help: 'files starting on or before this day, YYYYMMDD or YYYY-MM-DD' },
  },
  version: {
    role: 'filter',
    kind: 'version',
    spec: true,
    pattern: '^(v\\d{2}-\\d{2}|\\*|latest)$',
    description: "vXX-YY, * for any version, or latest for each product's highest.",
    examples: ['v00-01', '*', 'latest'],
    cli: { flag: '--version <vXX-YY>', help: 'version, e.g. v00-01, or * for any' },
  },
  extension: { role: 'filter', kind: 'extension', spec: true, description: 'File extension, set by the data level.', cli: { flag: '--extension <ext>', help: 'file extension, e.g. cdf or pkts' } },
  ingestion_start_date: {
    role: 'filter',
    kind: 'instant',
    spec: false,
    pattern: INSTANT,
    description: 'Indexed on or after: YYYYMMDD or an ISO-8601 date-time with a zone.',
    examples: ['2026-11-22T01:53:59.587Z'],
    cli: { flag: '--since <date>', help: 'files indexed at or after: YYYYMMDD or YYYY-MM-DD (UTC) or an ISO-8601 date-time, e.g. 2024-01-05T12:00:00Z' },
  },
  ingestion_end_date: {
    role: 'filter',
    kind: 'instant',
    spec: false,
    pattern: INSTANT,
    description: 'Indexed on or before: YYYYMMDD (its whole day) or an ISO-8601 date-time with a zone.',
    examples: ['20261122'],
    cli: { flag: '--until <date>', help: 'files indexed at or before: YYYYMMDD or YYYY-MM-DD (the whole day, UTC) or an ISO-8601 date-time' },
  },
  overlap: {
    role: 'filter',
    kind: 'boolean',
    spec: false,
    description: 'true: start_date/end_date select files whose [start, end] span meets the range.',
    cli: { flag: '--overlap', help: 'with --start-date/--end-date: files whose start-end span meets the range' },
  },
  status: {
    role: 'filter',
    kind: 'status',
    spec: false,
    pattern: '^(archived|withdrawn|any)$',
    description: 'archived (the default): current files only; withdrawn: only the withdrawn files (docs/api.md "Withdrawn files"); any: both.',
    examples: ['archived', 'withdrawn', 'any'],
    cli: { flag: '--status <status>', help: 'archived (the default), withdrawn (only withdrawn files, with their tombstones) or any' },
  },
  released: {
    role: 'filter',
    kind: 'boolean',
    spec: false,
    description: 'true: only files whose release date has passed; false: only team-only files (docs/api.md "Who sees what"). A caller without a key sees released files only.',
  },
  release: {
    role: 'filter',
    kind: 'release-number',
    spec: false,
    pattern: '^[1-9]\\d{0,8}$',
    description: 'Only the files of release N: exactly its manifest, whatever was uploaded, withdrawn or released since; status defaults to any (docs/api.md "Releases").',
    examples: ['1'],
    cli: { flag: '--release <n>', help: 'only the files of release N (exactly its manifest)' },
  },
  limit: {
    role: 'answer',
    kind: 'page-size',
    spec: false,
    pattern: '^\\d+$',
    description: `Answer one page of at most this many records (1 to ${MAX_PAGE_LIMIT}).`,
    examples: ['1000'],
  },
  cursor: { role: 'answer', kind: 'cursor', spec: false, description: 'Continue after the page that handed it out (X-Next-Cursor).' },
  sort: { role: 'answer', kind: 'sort', spec: false, description: 'Order; - in front for descending; file_path breaks ties.' },
  format: { role: 'answer', kind: 'format', spec: false, description: 'Representation (default json); also chosen by Accept. metalink: a Metalink 4 document of the files (docs/query.md).' },
} as const satisfies Readonly<Record<string, QueryParameterRule>>;

export type QueryParameterName = keyof typeof QUERY_PARAMETERS;
type NamesWith<R extends ParameterRole> = { [K in QueryParameterName]: (typeof QUERY_PARAMETERS)[K]['role'] extends R ? K : never }[QueryParameterName];
export type QueryFilterName = NamesWith<'filter'>;
export type AnswerParameterName = NamesWith<'answer'>;

/** A filter's value once parsed (src/catalog/query-filter.ts): `archived`, the default, is left out. */
export type FilterValue<K extends ParameterKind> = K extends 'boolean' ? boolean : K extends 'status' ? Exclude<StatusChoice, 'archived'> : string;

/** The spec's eight are the record's fields, named alike (docs/api.md "The record"). */
type SpecNames = { [K in QueryParameterName]: (typeof QUERY_PARAMETERS)[K]['spec'] extends true ? K : never }[QueryParameterName];
const specNamesAreRecordFields: [SpecNames] extends [SpecRecordField] ? ([SpecRecordField] extends [SpecNames] ? true : never) : never = true;
void specNamesAreRecordFields;

/** Every parameter, in the declared order. */
export const QUERY_PARAMETER_ORDER = Object.keys(QUERY_PARAMETERS) as readonly QueryParameterName[];

/** What /events and /coverage take: the filters, in order. */
export const QUERY_FILTERS = QUERY_PARAMETER_ORDER.filter((name) => QUERY_PARAMETERS[name].role === 'filter') as readonly QueryFilterName[];

/** Paging, order and representation of /query's answer, in order. */
export const ANSWER_PARAMETERS = QUERY_PARAMETER_ORDER.filter((name) => QUERY_PARAMETERS[name].role === 'answer') as readonly AnswerParameterName[];

export function isQueryParameter(name: string): name is QueryParameterName {
  return Object.hasOwn(QUERY_PARAMETERS, name);
}
