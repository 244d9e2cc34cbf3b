import { pagesOf, RecordPages } from '../catalog/record-pages.js';
import { METALINK_TYPE } from './metalink.js';
import { CSV_HEADER, csvRow, RECORD_FIELD_INFO, RECORD_FIELDS } from '../wire/record.js';

/** Media types of the query answer's representations. */
export const MEDIA_TYPES = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
  metalink: METALINK_TYPE,
} as const;


/** Chunk size of a streamed answer: big enough to keep writes few, small enough to stay flat. */
const CHUNK = 64 * 1024;

/**
 * Records as text in the representation a Content-Type names, produced as they arrive,
 * in chunks of about CHUNK characters. JSON is an array; NDJSON a record per line; CSV
 * a header row then a row per record (RFC 4180 quoting).
 */
export async function* renderRecords(records: AsyncIterable<unknown>, contentType: string): AsyncIterable<string> {
  const kind = contentType.startsWith('text/csv') ? 'csv' : contentType.startsWith(MEDIA_TYPES.ndjson) ? 'ndjson' : 'json';
  let buffer = kind === 'json' ? '[' : kind === 'csv' ? CSV_HEADER : '';
  let first = true;
  // Records the catalog wrote as JSON itself are sent as they are.
  const json = kind !== 'csv' && records instanceof RecordPages ? records.jsonPages() : undefined;
  if (json) {
    for await (const page of json) {
      for (const text of page) {
        buffer += kind === 'json' ? (first ? text : `,${text}`) : `${text}\n`;
        first = false;
        if (buffer.length >= CHUNK) {
          yield buffer;
          buffer = '';
        }
      }
    }
    yield kind === 'json' ? `${buffer}]` : buffer;
    return;
  }
  // A page at a time where the catalog offers pages: no await per record.
  for await (const page of pagesOf(records)) {
    for (const record of page) {
      if (kind === 'json') buffer += (first ? '' : ',') + recordJson(record);
      else if (kind === 'ndjson') buffer += `${recordJson(record)}\n`;
      else buffer += csvRow(record as Record<string, unknown>);
      first = false;
      if (buffer.length >= CHUNK) {
        yield buffer;
        buffer = '';
      }
    }
  }
  yield kind === 'json' ? `${buffer}]` : buffer;
}

/** A string JSON.stringify would copy between quotes unchanged. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes.
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function jsonText(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** Per field of the wire record, in order: its name as JSON, whether it is a number, whether every record has it. */
const JSON_FIELDS = RECORD_FIELDS.map((field) => ({
  field,
  name: `"${field}":`,
  integer: RECORD_FIELD_INFO[field].type === 'integer',
  always: RECORD_FIELD_INFO[field].always,
}));

/**
 * JSON.stringify(record), written field by field for a catalog record (the common case of
 * large answers: no walk of the object's keys, and most strings need no escaping): the wire
 * record's fields in order (src/wire/record.ts), those not always there possibly absent.
 * Anything else, or a record with other fields or another order, goes to JSON.stringify.
 */
export function recordJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const r = value as Record<string, unknown>;
  const keys = Object.keys(r);
  let out = '';
  let at = 0;
  for (const { field, name, integer, always } of JSON_FIELDS) {
    if (keys[at] !== field) {
      if (always) return JSON.stringify(value);
      continue;
    }
    const v = r[field];
    if (integer ? typeof v !== 'number' || !Number.isFinite(v) : typeof v !== 'string') return JSON.stringify(value);
    out += `${at === 0 ? '{' : ','}${name}${integer ? String(v) : jsonText(v as string)}`;
    at++;
  }
  return at === keys.length && at > 0 ? `${out}}` : JSON.stringify(value);
}
