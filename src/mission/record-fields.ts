// The record's fields are part of the wire format, defined once in src/wire/record.ts.
export { ARCHIVE_RECORD_FIELDS, RECORD_FIELDS, SPEC_RECORD_FIELDS, TUPLE_FIELDS, type RecordField, type SpecRecordField } from '../wire/record.js';
