import { storedPath, type ScienceFileName } from '../mission/index.js';
import type { WireRecord } from '../wire/record.js';

/**
 * A catalog record: the wire record (src/wire/record.ts: the fields of interface spec 2.3, then
 * what the archive knows of the bytes) with those archive fields always present; `uploader`
 * is absent when no API key stored the file.
 */
export type FileRecord = WireRecord & Required<Pick<WireRecord, 'ingestion_date' | 'size' | 'sha256'>>;

/** What the archive learns of a file's bytes when it indexes them. */
export type IndexedFacts = Pick<FileRecord, 'ingestion_date' | 'size' | 'sha256' | 'uploader'>;

/** The record of a parsed name: its stored path (spec 2.2) and the name's elements (2.1) as record fields (2.3). */
export function recordFor(name: ScienceFileName, facts: IndexedFacts): FileRecord {
  return {
    file_path: storedPath(name),
    instrument: name.instrument,
    data_level: name.dataLevel,
    descriptor: name.descriptor,
    start_date: name.startDate,
    end_date: name.endDate,
    version: name.version,
    extension: name.extension,
    ingestion_date: facts.ingestion_date,
    size: facts.size,
    sha256: facts.sha256,
    ...(facts.uploader === undefined ? {} : { uploader: facts.uploader }),
  };
}
