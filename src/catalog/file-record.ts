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
