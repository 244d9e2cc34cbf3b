import { storedPath, type ScienceFileName } from '../mission/index.js';
import { RECORD_FIELDS, type AlwaysRecordField, type ArchiveRecordField, type WireRecord } from '../wire/record.js';

/**
 * A catalog record: the wire record (src/wire/record.ts: the spec's fields, then what the
 * archive knows of the bytes) with the fields every stored record has always present;
 * `uploader` is absent when no API key stored the file.
 */
export type FileRecord = WireRecord & Required<Pick<WireRecord, AlwaysRecordField & ArchiveRecordField>>;

/** What the archive learns of a file's bytes when it indexes them: the archive's fields. */
export type IndexedFacts = Pick<FileRecord, ArchiveRecordField>;

/**
 * The record of these values: fields in the wire record's order (JSON member order), those
 * without a value left out.
 */
export function inRecordOrder(values: { readonly [F in keyof FileRecord]?: FileRecord[F] | undefined }): FileRecord {
  const record: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) if (values[field] !== undefined) record[field] = values[field];
  return record as unknown as FileRecord;
}

/** The record of a parsed name: its stored path and the name's elements as record fields (docs/api.md "The record"). */
export function recordFor(name: ScienceFileName, facts: IndexedFacts): FileRecord {
  return inRecordOrder({
    file_path: storedPath(name),
    instrument: name.instrument,
    data_level: name.dataLevel,
    descriptor: name.descriptor,
    start_date: name.startDate,
    end_date: name.endDate,
    version: name.version,
    extension: name.extension,
    ...facts,
  });
}
