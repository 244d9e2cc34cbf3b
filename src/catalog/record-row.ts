import type { FileRecord } from './file-record.js';

/** The files table's columns in record order: what the prepared reads of every engine select. */
export const RECORD_COLUMNS =
  'file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_date, size, sha256, uploader';

/** A row of RECORD_COLUMNS read as an array (size may come back as text: BIGINT in pg). */
export type RecordRow = [string, string, string, string, string, string, string, string, string, string | number, string, string | null];

/** The record a row holds; `uploader` only when there is one. */
export function recordOfRow(r: RecordRow): FileRecord {
  const record = {
    file_path: r[0],
    instrument: r[1],
    data_level: r[2],
    descriptor: r[3],
    start_date: r[4],
    end_date: r[5],
    version: r[6],
    extension: r[7],
    ingestion_date: r[8],
    size: Number(r[9]),
    sha256: r[10],
  };
  return r[11] ? { ...record, uploader: r[11] } : record;
}
