import { MAX_PAGE_LIMIT, QUERY_FORMATS, SORT_FIELDS, unknownParameterMessage } from '../catalog/index.js';
import { NOTHING_TO_LIST } from '../errors/index.js';
import { missionExtensions, type MissionConfig } from '../mission/index.js';
import { exampleStoredPath, MEDIA_TYPES, pythonTuple } from '../service/index.js';
import { FILE_RECORD_ID, jsonString, text } from './api-schemas.js';

/**
 * Schemas of /query (both forms) and /events: descriptions of the parameters that
 * parseQueryFilter checks (src/catalog/query-filter.ts), never a second copy of its rules.
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

/** The filters of GET /query (docs/api.md, The three endpoints) and the additive ones: what /query and /events both take. */
function filterProperties(mission: MissionConfig) {
  return {
    file_path: { type: 'string', description: `Stored path or file name. ${ANY}`, examples: [exampleStoredPath(mission)] },
    instrument: { type: 'string', enum: [...mission.instruments], description: ANY },
    data_level: { type: 'string', enum: [...mission.dataLevels], description: ANY },
    descriptor: { type: 'string', description: `e.g. sci. ${ANY}`, examples: ['sci'] },
    start_date: { type: 'string', description: `YYYYMMDD: files whose start date is on or after it (with overlap, whose span meets the range). ${ANY}`, examples: ['20240101'] },
    end_date: { type: 'string', description: `YYYYMMDD: files whose start date is on or before it. ${ANY}`, examples: ['20241231'] },
    version: { type: 'string', description: `vXX-YY, * for any version, or latest for each product's highest. ${ANY}`, examples: ['v00-01', '*', 'latest'] },
    extension: { type: 'string', enum: missionExtensions(mission), description: ANY },
    ingestion_start_date: { type: 'string', description: 'Indexed on or after: YYYYMMDD or an ISO-8601 date-time with a zone.', examples: ['2026-11-22T01:53:59.587Z'] },
    ingestion_end_date: { type: 'string', description: 'Indexed on or before: YYYYMMDD (its whole day) or an ISO-8601 date-time with a zone.', examples: ['20261122'] },
    overlap: { type: 'string', enum: ['true', 'false'], description: 'true: start_date/end_date select files whose [start, end] span meets the range.' },
  } as const;
}

/** Paging, order and representation: /query only. */
const PAGE_PROPERTIES = {
  limit: { type: 'string', description: `Answer one page of at most this many records (1 to ${MAX_PAGE_LIMIT}).`, examples: ['1000'] },
  cursor: { type: 'string', description: 'Continue after the page that handed it out (X-Next-Cursor).' },
  sort: { type: 'string', enum: SORT_FIELDS.flatMap((f) => [f, `-${f}`]), description: 'Order; - in front for descending; file_path breaks ties.' },
} as const;

export function querySchema(mission: MissionConfig, form: 'current' | 'earlier') {
  const example = { instrument: 'swe', data_level: 'l1a', descriptor: 'sci', start_date: '20240105', end_date: '20240105', version: 'v00-01', extension: 'cdf' };
  const records = { type: 'array', items: { $ref: `${FILE_RECORD_ID}#` } };
  const format =
    form === 'current'
      ? { type: 'string', enum: [...QUERY_FORMATS], description: 'Representation (default json); also chosen by Accept. metalink: a Metalink 4 document of the files (docs/query.md).' }
      : { type: 'string', enum: ['json', 'metalink'], description: 'The earlier form\'s records are one string of tuples; csv and ndjson are refused (400); metalink answers the same Metalink 4 document as /query.' };
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
    querystring: { type: 'object', additionalProperties: true, properties: { ...filterProperties(mission), ...PAGE_PROPERTIES, format } },
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
    description: 'Takes the query filters (not limit, cursor, sort, format). Send Last-Event-ID to resume after an event.',
    querystring: { type: 'object', additionalProperties: true, properties: filterProperties(mission) },
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
