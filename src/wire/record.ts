/**
 * The wire record: what GET /query answers for one file, in every representation (JSON,
 * NDJSON, CSV), and what the OpenAPI document, the SDK, the `sdc` command and the portal
 * show. Defined once here; this module imports nothing, so the browser bundle can use it.
 */

/** The fields of a file metadata record (interface spec 2.3), in the spec's order. */
export const SPEC_RECORD_FIELDS = ['file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension'] as const;

/** What this archive adds after them: when the file was indexed, its size and checksum, who uploaded it. */
export const ARCHIVE_RECORD_FIELDS = ['ingestion_date', 'size', 'sha256', 'uploader'] as const;

/** Every field of an answered record, in order: JSON member order, CSV columns. */
export const RECORD_FIELDS = [...SPEC_RECORD_FIELDS, ...ARCHIVE_RECORD_FIELDS] as const;

export type SpecRecordField = (typeof SPEC_RECORD_FIELDS)[number];
export type RecordField = (typeof RECORD_FIELDS)[number];

/** The earlier form's tuple (end of spec 4.3): the spec's fields without file_path, in order. */
export const TUPLE_FIELDS = SPEC_RECORD_FIELDS.slice(1) as readonly Exclude<SpecRecordField, 'file_path'>[];

/** Each field's JSON type, whether every record has it, and what it means (the OpenAPI schema's source). */
export const RECORD_FIELD_INFO: Readonly<Record<RecordField, { readonly type: 'string' | 'integer'; readonly always: boolean; readonly description: string }>> = {
  file_path: { type: 'string', always: true, description: 'Stored path <mission>/<instrument>/<datalevel>/<YYYY>/<MM>/<file name>.' },
  instrument: { type: 'string', always: true, description: 'Instrument, from the file name.' },
  data_level: { type: 'string', always: true, description: 'Data level, from the file name.' },
  descriptor: { type: 'string', always: true, description: 'Descriptor, from the file name.' },
  start_date: { type: 'string', always: true, description: 'YYYYMMDD, first day of the data.' },
  end_date: { type: 'string', always: true, description: 'YYYYMMDD, last day of the data.' },
  version: { type: 'string', always: true, description: 'vXX-YY.' },
  extension: { type: 'string', always: true, description: 'File extension, set by the data level.' },
  ingestion_date: { type: 'string', always: true, description: 'When the bytes were indexed, ISO-8601 UTC.' },
  size: { type: 'integer', always: true, description: 'Bytes.' },
  sha256: { type: 'string', always: true, description: 'Lower-case hex SHA-256 of the bytes, to verify a download.' },
  uploader: { type: 'string', always: false, description: 'Name of the API key that uploaded the file; absent when no key was used.' },
};

/**
 * A record as it travels. The archive's fields are optional here because a spec-only
 * server may leave them out; this archive always sends them, except `uploader`.
 */
export interface WireRecord {
  readonly file_path: string;
  readonly instrument: string;
  readonly data_level: string;
  readonly descriptor: string;
  readonly start_date: string;
  readonly end_date: string;
  readonly version: string;
  readonly extension: string;
  readonly ingestion_date?: string;
  readonly size?: number;
  readonly sha256?: string;
  readonly uploader?: string;
}

/** A cell a spreadsheet would take for a formula: it begins with =, +, -, @, tab or CR (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * RFC 4180: a cell holding a comma, quote, CR or LF is quoted, its quotes doubled; absent is
 * empty. A text cell a spreadsheet would evaluate (a descriptor such as `-1-67051`) is written
 * with a `'` in front, quoted, as OWASP advises, so it is shown, not run (docs/api.md "CSV").
 * Both the server's `format=csv` and `sdc query --output csv` write cells here; JSON and NDJSON
 * keep every value exact.
 */
export function csvCell(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) return `"'${text.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The CSV header row of the wire record (CRLF-terminated). */
export const CSV_HEADER = `${RECORD_FIELDS.join(',')}\r\n`;

/** One record as a CSV row, in RECORD_FIELDS order (CRLF-terminated). */
export function csvRow(record: Readonly<Partial<Record<RecordField, unknown>>>): string {
  return `${RECORD_FIELDS.map((f) => csvCell(record[f])).join(',')}\r\n`;
}
