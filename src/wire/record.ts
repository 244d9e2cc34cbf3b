/**
 * The wire record: what GET /query answers for one file, in every representation (JSON,
 * NDJSON, CSV), and what the OpenAPI document, the SDK, the `sdc` command and the portal
 * show. Defined once here; this module imports nothing, so the browser bundle can use it.
 */

/** What the archive declares of one field: its JSON type, whether the spec defines it, whether every stored record has it. */
interface FieldInfo {
  readonly type: 'string' | 'integer';
  /** A field of the spec's record (docs/api.md "The record"), also a query parameter of the same name (src/wire/query.ts). */
  readonly spec: boolean;
  /** Every record this archive stores has it (a spec-only server may still leave archive fields out). */
  readonly always: boolean;
  readonly description: string;
  /** Written by a withdrawal from what the curator gave (docs/api.md "Withdrawn files"): the tombstone's, required or optional there. */
  readonly tombstone?: 'required' | 'optional';
  /** The portal's results table shows it under this label; `sort`: its header orders the page. */
  readonly column?: { readonly label: string; readonly sort: boolean };
}

/**
 * THE declaration of the record: every field, in order (JSON member order, CSV columns, the
 * catalog's columns, src/catalog/record-columns.ts), the spec's fields first. The arrays and
 * types below are derived from it, so a new field is one entry here (plus a catalog migration).
 */
export const RECORD_FIELD_INFO = {
  file_path: { type: 'string', spec: true, always: true, description: 'Stored path <mission>/<instrument>/<datalevel>/<YYYY>/<MM>/<file name>.', column: { label: 'File', sort: true } },
  instrument: { type: 'string', spec: true, always: true, description: 'Instrument, from the file name.', column: { label: 'Instrument', sort: true } },
  data_level: { type: 'string', spec: true, always: true, description: 'Data level, from the file name.', column: { label: 'Level', sort: true } },
  descriptor: { type: 'string', spec: true, always: true, description: 'Descriptor, from the file name.', column: { label: 'Descriptor', sort: true } },
  start_date: { type: 'string', spec: true, always: true, description: 'YYYYMMDD, first day of the data.', column: { label: 'Start', sort: true } },
  end_date: { type: 'string', spec: true, always: true, description: 'YYYYMMDD, last day of the data.', column: { label: 'End', sort: true } },
  version: { type: 'string', spec: true, always: true, description: 'vXX-YY.', column: { label: 'Version', sort: true } },
  extension: { type: 'string', spec: true, always: true, description: 'File extension, set by the data level.', column: { label: 'Ext.', sort: true } },
  ingestion_date: { type: 'string', spec: false, always: true, description: 'When the bytes were indexed, ISO-8601 UTC.', column: { label: 'Ingested', sort: true } },
  size: { type: 'integer', spec: false, always: true, description: 'Bytes.', column: { label: 'Size', sort: true } },
  sha256: { type: 'string', spec: false, always: true, description: 'Lower-case hex SHA-256 of the bytes, to verify a download.', column: { label: 'SHA-256', sort: false } },
  uploader: { type: 'string', spec: false, always: false, description: 'Name of the API key that uploaded the file; absent when no key was used.', column: { label: 'Uploader', sort: true } },
  status: { type: 'string', spec: false, always: false, description: '`withdrawn` once a curator withdrew the file (docs/api.md "Withdrawn files"); absent while the file is archived and current. Answers leave withdrawn files out unless `status=` asks for them.' },
  withdrawn_date: { type: 'string', spec: false, always: false, description: 'When the file was withdrawn, ISO-8601 UTC; absent while it is archived.', tombstone: 'required' },
  withdrawn_reason: { type: 'string', spec: false, always: false, description: 'Why the file was withdrawn, in the curator\'s words.', tombstone: 'required' },
  withdrawn_by: { type: 'string', spec: false, always: false, description: 'Name of the curator key that withdrew the file.', tombstone: 'required' },
  superseded_by: { type: 'string', spec: false, always: false, description: 'Stored path of the file that replaces a withdrawn one, when it has one.', tombstone: 'optional' },
  verified_date: { type: 'string', spec: false, always: false, description: 'When a fixity audit last re-read the stored bytes, ISO-8601 UTC; absent until the first audit (docs/deploy.md "Fixity audits").' },
  fixity: { type: 'string', spec: false, always: false, description: 'What that audit found: `ok`, `mismatch` (the bytes no longer match size and SHA-256) or `missing`.' },
  release_date: { type: 'string', spec: false, always: false, description: 'When the file became, or becomes, public, ISO-8601 UTC (docs/api.md "Who sees what"); absent while a team-only file has no date.' },
  release: { type: 'integer', spec: false, always: false, description: 'The number of the release that published the file, when one did (docs/api.md "Releases").' },
} as const satisfies Readonly<Record<string, FieldInfo>>;

type Info = typeof RECORD_FIELD_INFO;
export type RecordField = keyof Info;
/** The fields of a file metadata record (docs/api.md "The record"). */
export type SpecRecordField = { [F in RecordField]: Info[F]['spec'] extends true ? F : never }[RecordField];
/** What this archive adds after them: when the file was indexed, its size and checksum, who uploaded it. */
export type ArchiveRecordField = Exclude<RecordField, SpecRecordField>;
/** The fields every record this archive stores has. */
export type AlwaysRecordField = { [F in RecordField]: Info[F]['always'] extends true ? F : never }[RecordField];

type FieldsWith<P> = { [F in RecordField]: Info[F] extends P ? F : never }[RecordField];
/** What a curator's withdrawal writes besides `status` (docs/api.md "Withdrawn files"). */
export type Tombstone = { readonly [F in FieldsWith<{ tombstone: 'required' }>]: ValueOf<F> } & { readonly [F in FieldsWith<{ tombstone: 'optional' }>]?: ValueOf<F> };
export type TombstoneField = keyof Tombstone;

/** Every field of an answered record, in order: JSON member order, CSV columns. */
export const RECORD_FIELDS = Object.keys(RECORD_FIELD_INFO) as readonly RecordField[];

/** The spec's fields, in the spec's order. */
export const SPEC_RECORD_FIELDS = RECORD_FIELDS.filter((f) => RECORD_FIELD_INFO[f].spec) as readonly SpecRecordField[];

/** The archive's fields, after the spec's. */
export const ARCHIVE_RECORD_FIELDS = RECORD_FIELDS.filter((f) => !RECORD_FIELD_INFO[f].spec) as readonly ArchiveRecordField[];

/** The tombstone's fields, in record order. */
export const TOMBSTONE_FIELDS = RECORD_FIELDS.filter((f) => 'tombstone' in RECORD_FIELD_INFO[f]) as readonly TombstoneField[];

/** The portal's table columns, in record order, and those whose header orders the page. */
export type TableColumn = FieldsWith<{ column: object }>;
export type TableSortKey = FieldsWith<{ column: { sort: true } }>;
export const TABLE_COLUMNS = RECORD_FIELDS.filter((f) => 'column' in RECORD_FIELD_INFO[f]) as readonly TableColumn[];
export const TABLE_SORT_KEYS = TABLE_COLUMNS.filter((f) => RECORD_FIELD_INFO[f].column.sort) as readonly TableSortKey[];

/** The earlier form's tuple (docs/api.md "Earlier form"): the spec's fields without file_path, in order. */
export const TUPLE_FIELDS = SPEC_RECORD_FIELDS.slice(1) as readonly Exclude<SpecRecordField, 'file_path'>[];

type ValueOf<F extends RecordField> = Info[F]['type'] extends 'integer' ? number : string;

/**
 * A record as it travels. The archive's fields are optional here because a spec-only
 * server may leave them out; this archive always sends them, except `uploader`.
 */
export type WireRecord = { readonly [F in SpecRecordField]: ValueOf<F> } & { readonly [F in ArchiveRecordField]?: ValueOf<F> };

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
