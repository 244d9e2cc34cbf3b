import { RECORD_FIELDS, SPEC_RECORD_FIELDS, type RecordField, type SpecRecordField } from '../mission/index.js';

/**
 * What the query endpoint answers, as the client sees it on the wire: the fields of
 * interface spec 2.3, then what this archive adds (a spec-only server may leave them out).
 */
export interface ArchiveRecord {
  readonly file_path: string;
  readonly instrument: string;
  readonly data_level: string;
  readonly descriptor: string;
  readonly start_date: string;
  readonly end_date: string;
  readonly version: string;
  readonly extension: string;
  /** When the archive indexed the bytes, ISO-8601 UTC. */
  readonly ingestion_date?: string;
  /** Bytes. */
  readonly size?: number;
  /** Lower-case hex SHA-256 of the bytes. */
  readonly sha256?: string;
}

/** The spec's fields (2.3) in its order: the table's columns. */
export const SPEC_FIELDS = SPEC_RECORD_FIELDS;

/** Every field, for json and csv output. */
export const ALL_FIELDS = RECORD_FIELDS;

export type { RecordField };

/** Query parameters of interface spec 4.3; the server validates their values. */
export type QueryFilter = Partial<Record<SpecRecordField, string>>;

/** `?instrument=swe&start_date=20240101`, empty values left out. */
export function queryString(filter: QueryFilter): string {
  const params = new URLSearchParams();
  for (const name of SPEC_FIELDS) {
    const value = filter[name];
    if (value !== undefined && value !== '') params.append(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Checks one element of the answer enough that the code after it can rely on its shape. */
export function isArchiveRecord(value: unknown): value is ArchiveRecord {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as Record<string, unknown>;
  return (
    SPEC_FIELDS.every((f) => typeof o[f] === 'string') &&
    (o.size === undefined || typeof o.size === 'number') &&
    (o.sha256 === undefined || typeof o.sha256 === 'string')
  );
}
