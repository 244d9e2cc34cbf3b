import { RECORD_FIELD_INFO, RECORD_FIELDS, type RecordField } from '../wire/record.js';
import type { FileRecord } from './file-record.js';
import type { FilesTable } from './schema.js';

/*
 * The files table's record columns: one per field of the wire record (src/wire/record.ts), in
 * its order, named as the field (the SQL name is the JSON name). Every statement, insert, COPY
 * and row conversion of either engine takes its columns from here; a new field is an entry in
 * src/wire/record.ts and a migration (src/catalog/migrations.ts), nothing else.
 */

export interface RecordColumn {
  readonly field: RecordField;
  /** The column's SQL name. */
  readonly name: string;
  /** BIGINT in PostgreSQL (which the pg driver returns as text), INTEGER in SQLite; else text. */
  readonly integer: boolean;
  /** NULL when the record has no value (the field is absent from it). */
  readonly nullable: boolean;
}

export const RECORD_COLUMNS: readonly RecordColumn[] = RECORD_FIELDS.map((field) => ({
  field,
  name: field,
  integer: RECORD_FIELD_INFO[field].type === 'integer',
  nullable: !RECORD_FIELD_INFO[field].always,
}));

/** The record columns as a select or insert list, in record order. */
export const RECORD_COLUMN_LIST = RECORD_COLUMNS.map((c) => c.name).join(', ');

/** How many columns a record row has (parameters per row of an INSERT). */
export const RECORD_COLUMN_COUNT = RECORD_COLUMNS.length;

/** A row of RECORD_COLUMN_LIST read as an array, in column order. */
export type RecordRow = readonly unknown[];

// Per column, read once: the row conversions below run for every record read or written.
const FIELDS = RECORD_COLUMNS.map((c) => c.field);
const INTEGER = RECORD_COLUMNS.map((c) => c.integer);

/**
 * The record a row holds, fields in record order (what JSON.stringify writes); a NULL column
 * leaves its field out. Integers read as text (PostgreSQL BIGINT) become numbers.
 */
export function recordOfRow(row: RecordRow): FileRecord {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const value = row[i];
    if (value === null || value === undefined) continue;
    record[FIELDS[i]!] = INTEGER[i] ? Number(value) : value;
  }
  return record as unknown as FileRecord;
}

/** Puts a record's column values into `into` from `at` on, in column order, NULL for an absent field. */
export function putRow(record: FileRecord, into: unknown[], at: number): void {
  for (let i = 0; i < FIELDS.length; i++) into[at + i] = record[FIELDS[i]!] ?? null;
}

/** A record as a row object for Kysely's insert: every column, NULL for an absent field. */
export function rowOf(record: FileRecord): Omit<FilesTable, 'is_latest' | 'release_logged'> {
  const row: Record<string, unknown> = {};
  for (const field of FIELDS) row[field] = record[field] ?? null;
  return row as Omit<FilesTable, 'is_latest' | 'release_logged'>;
}

/** Some fields of a path's record, read by the primary key: the statement and its row's conversion. */
export interface FieldsRead<F extends RecordField> {
  readonly text: string;
  readonly recordOf: (row: RecordRow) => Pick<FileRecord, F>;
}

// Keyed by the caller's constant field list, so that a request builds no SQL text.
const fieldsReads = new WeakMap<readonly RecordField[], FieldsRead<RecordField>>();

/**
 * The read of `fields` of a path's record (Catalog.getFields): only the columns a check needs,
 * as each column read costs the driver per request (PostgreSQL's pg sets up a parser for every
 * column of a result; docs/performance.md, "Per-request cost on both engines").
 */
export function fieldsRead<F extends RecordField>(fields: readonly F[]): FieldsRead<F> {
  let read = fieldsReads.get(fields);
  if (read === undefined) {
    const integer = fields.map((f) => RECORD_COLUMNS.find((c) => c.field === f)!.integer);
    read = {
      text: `SELECT ${fields.join(', ')} FROM files WHERE file_path = ?`,
      recordOf: (row) => {
        const record: Record<string, unknown> = {};
        for (let i = 0; i < fields.length; i++) {
          const value = row[i];
          if (value === null || value === undefined) continue;
          record[fields[i]!] = integer[i] ? Number(value) : value;
        }
        return record as Pick<FileRecord, RecordField>;
      },
    };
    fieldsReads.set(fields, read);
  }
  return read as unknown as FieldsRead<F>;
}
