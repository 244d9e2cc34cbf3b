import { unknownParameterMessage } from '../catalog/index.js';
import { NOTHING_TO_LIST } from '../errors/index.js';
import { missionExtensions, type MissionConfig } from '../mission/index.js';
import { exampleStoredPath, MEDIA_TYPES, pythonTuple } from '../service/index.js';
import {
  ANSWER_PARAMETERS,
  QUERY_FILTERS,
  QUERY_FORMATS,
  QUERY_PARAMETER_ORDER,
  QUERY_PARAMETERS,
  SORT_FIELDS,
  STATUS_CHOICES,
  type ParameterKind,
  type QueryParameterName,
  type QueryParameterRule,
} from '../wire/query.js';
import { FILE_RECORD_ID, jsonString, text } from './api-schemas.js';

/**
 * Schemas of /query (both forms), /events and /coverage's parameters: built from their
 * declaration (src/wire/query.ts) that parseQueryFilter checks (src/catalog/query-filter.ts),
 * never a second copy of its rules.
 */

const ANY = 'Leave out to match any.';

const CORS_HEADER = {
  'Access-Control-Allow-Origin': { type: 'string', description: 'CORS: `*` unless SDC_CORS_ORIGIN says otherwise.' },
} as const;

const PAGE_HEADERS = {
  ...CORS_HEADER,
  'X-Total-Count': { type: 'string', description: 'With limit: how many records match in all.' },
  'X-Next-Cursor': { type: 'string', description: 'With limit, when another page follows: its cursor.' },
  Link: { type: 'string', description: 'With limit, when another page follows: `<url>; rel="next"`.' },
} as const;

/** A parameter's schema by its kind: the mission's values as enums, the declared pattern, examples. */
function parameterSchema(name: QueryParameterName, mission: MissionConfig) {
  const rule: QueryParameterRule = QUERY_PARAMETERS[name];
  const description = rule.spec ? `${rule.description} ${ANY}` : rule.description;
  const choices = kindChoices(rule.kind, mission);
  return {
    type: 'string',
    ...(choices ? { enum: choices } : {}),
    ...(rule.pattern ? { pattern: rule.pattern } : {}),
    description,
    ...(rule.kind === 'stored-path' ? { examples: [exampleStoredPath(mission)] } : rule.examples ? { examples: [...rule.examples] } : {}),
  };
}

function kindChoices(kind: ParameterKind, mission: MissionConfig): string[] | undefined {
  switch (kind) {
    case 'instrument':
      return [...mission.instruments];
    case 'data-level':
      return [...mission.dataLevels];
    case 'extension':
      return missionExtensions(mission);
    case 'boolean':
      return ['true', 'false'];
    case 'sort':
      return SORT_FIELDS.flatMap((f) => [f, `-${f}`]);
    case 'format':
      return [...QUERY_FORMATS];
    case 'status':
      return [...STATUS_CHOICES];
    default:
      return undefined;
  }
}

/**
 * The querystring properties of the given parameters, in the declared order (src/wire/query.ts):
 * /query takes them all, /events and /coverage the filters.
 */
export function parameterProperties(mission: MissionConfig, names: readonly QueryParameterName[]): Record<string, ReturnType<typeof parameterSchema>> {
  return Object.fromEntries(names.map((name) => [name, parameterSchema(name, mission)]));
}

export function querySchema(mission: MissionConfig, form: 'current' | 'earlier') {
  const example = { instrument: 'swe', data_level: 'l1a', descriptor: 'sci', start_date: '20240105', end_date: '20240105', version: 'v00-01', extension: 'cdf' };
  const records = { type: 'array', items: { $ref: `${FILE_RECORD_ID}#` } };
  const properties = parameterProperties(mission, QUERY_PARAMETER_ORDER);
  if (form === 'earlier') {
    properties.format = {
      type: 'string',
      enum: ['json', 'metalink'],
      description: 'The earlier form\'s records are one string of tuples; csv and ndjson are refused (400); metalink answers the same Metalink 4 document as /query.',
    };
  }
  const metalink = {
    [MEDIA_TYPES.metalink]: {
      schema: {
        type: 'string',
        description:
          'format=metalink: a Metalink 4 document (RFC 5854), one <file> a line: name = stored path, <size>, <hash type="sha-256">, and a <url> signed for SDC_DOWNLOAD_TTL (the address /download redirects to). With limit, one page, with the same headers.',
      },
    },
  };
  const nothingToList = {
    ...jsonString('format=metalink and no file matches: a Metalink lists at least one file (SDC_NOTHING_TO_LIST).', NOTHING_TO_LIST.message()),
    headers: CORS_HEADER,
  };
  return {
    operationId: form === 'current' ? 'query' : 'queryEarlierForm',
    tags: [form === 'current' ? 'current form' : 'earlier form'],
    summary: 'Metadata of the stored files that match every given parameter',
    description: 'Every parameter is optional and may be given once. Any other name is refused (400). docs/query.md has the details.',
    querystring: { type: 'object', additionalProperties: true, properties },
    response: {
      200:
        form === 'current'
          ? {
              description: 'The matching records, ordered by file_path unless sort says otherwise ([] when none).',
              headers: PAGE_HEADERS,
              content: {
                [MEDIA_TYPES.json]: { schema: records },
                [MEDIA_TYPES.ndjson]: { schema: { type: 'string', description: 'One JSON record per line.' } },
                [MEDIA_TYPES.csv]: { schema: { type: 'string', description: 'A header row, then one row per record (RFC 4180).' } },
                ...metalink,
              },
            }
          : (() => {
              const tuples = jsonString(
                'One string: the matching records as Python tuples (instrument, data level, descriptor, start date, end date, version, extension), ordered by file_path; "[]" when none.',
                `[${pythonTuple(example)}]`,
              );
              return { ...tuples, content: { ...tuples.content, ...metalink }, headers: PAGE_HEADERS };
            })(),
      400: { ...jsonString('A parameter is unknown, repeated or malformed; the text says which and what is expected.', unknownParameterMessage('color')), headers: CORS_HEADER },
      404: nothingToList,
    },
  };
}

export function eventsSchema(mission: MissionConfig) {
  return {
    operationId: 'events',
    tags: ['current form'],
    summary: 'Live feed: a Server-Sent Event per file as it is indexed',
    description: `Takes the query filters (not ${ANSWER_PARAMETERS.join(', ')}). Send Last-Event-ID to resume after an event.`,
    querystring: { type: 'object', additionalProperties: true, properties: parameterProperties(mission, QUERY_FILTERS) },
    headers: { type: 'object', properties: { 'last-event-id': { type: 'string', description: 'Resume after this event id.' } } },
    response: {
      200: {
        description:
          'text/event-stream: first `event: start` (its `id` = where this connection starts), then per file `id`, `event: file`, `data` = the record as JSON; a comment line every 15 s when idle.',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      400: text('A filter is unknown, repeated or malformed, or a paging parameter was given.', 'limit does not apply to the live feed; use the query filters only.'),
      429: text('This address has too many feeds open at once.', 'Too many open feeds from this address: at most 8 at once. ...'),
      503: text('Every feed this instance serves is taken.', 'The live feed is full. Retry in 30 s, resuming with Last-Event-ID.'),
    },
  };
}
