/** Table types for Kysely: the catalog's one table. */
export interface FilesTable {
  file_path: string;
  instrument: string;
  data_level: string;
  descriptor: string;
  start_date: string;
  end_date: string;
  version: string;
  extension: string;
  ingestion_date: string;
  /** INTEGER in SQLite, BIGINT in PostgreSQL (pg returns it as a string). */
  size: number | string;
  sha256: string;
}

export interface CatalogDatabase {
  files: FilesTable;
}
