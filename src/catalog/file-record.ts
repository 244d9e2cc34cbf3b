import { storedPath, type ScienceFileName } from '../mission/index.js';

/** A catalog record: the fields of interface spec 2.3 plus what the archive knows of the bytes. */
export interface FileRecord {
  readonly file_path: string;
  readonly instrument: string;
  readonly data_level: string;
  readonly descriptor: string;
  readonly start_date: string;
  readonly end_date: string;
  readonly version: string;
  readonly extension: string;
  /** When the bytes were indexed, ISO-8601 UTC. */
  readonly ingestion_date: string;
  /** Bytes. */
  readonly size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  readonly sha256: string;
  /** Name of the API key whose upload address stored the file; absent when none did. */
  readonly uploader?: string;
}

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
