import { CSV_HEADER, csvRow } from '../wire/record.js';

/** Media types of the query answer's representations. */
export const MEDIA_TYPES = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
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
  for await (const record of records) {
    // The catalog builds records in the wire order (src/wire/record.ts), so JSON keeps them as
    // they are; CSV takes the wire record's columns.
    if (kind === 'json') buffer += (first ? '' : ',') + JSON.stringify(record);
    else if (kind === 'ndjson') buffer += `${JSON.stringify(record)}\n`;
    else buffer += csvRow(record as Record<string, unknown>);
    first = false;
    if (buffer.length >= CHUNK) {
      yield buffer;
      buffer = '';
    }
  }
  yield kind === 'json' ? `${buffer}]` : buffer;
}
