/** The fields of a file metadata record (interface spec 2.3), in the spec's order. */
export const SPEC_RECORD_FIELDS = [
  'file_path',
  'instrument',
  'data_level',
  'descriptor',
  'start_date',
  'end_date',
  'version',
  'extension',
] as const;

/** What this archive adds after them: when the file was indexed, its size and checksum. */
export const ARCHIVE_RECORD_FIELDS = ['ingestion_date', 'size', 'sha256'] as const;

/** Every field of an answered record, in order (CSV columns, JSON member order). */
export const RECORD_FIELDS = [...SPEC_RECORD_FIELDS, ...ARCHIVE_RECORD_FIELDS] as const;

export type SpecRecordField = (typeof SPEC_RECORD_FIELDS)[number];
export type RecordField = (typeof RECORD_FIELDS)[number];

/** The earlier form's tuple (end of spec 4.3): the spec's fields without file_path, in order. */
export const TUPLE_FIELDS = SPEC_RECORD_FIELDS.slice(1) as readonly Exclude<SpecRecordField, 'file_path'>[];
