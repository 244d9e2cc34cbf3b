import { once } from 'node:events';
import type pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import type { FileRecord } from '../file-record.js';
import { RECORD_COLUMN_LIST as COLUMNS, RECORD_COLUMNS } from '../record-columns.js';
import { recordJson } from '../change-log.js';
import { LOADED_CHANGES as CREATED } from './postgres-post-write.js';

/*
 * The bulk load's COPY (postgres-bulk-load.ts): records as COPY text, sent as the socket takes
 * them, into the files table, a staging table, or the load's change-log entries.
 */

/** Records turned into COPY text at once: few enough to die young. */
const PIECE = 1000;

/** The text COPY reads: tab-separated, `\N` for null, backslash escapes for what would break a line. */
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const SPECIAL = /[\\\n\r\t]/;
// A missing value is COPY's null, so the table's NOT NULL refuses it as insertMany's INSERT would
// (rendered as text it would be stored as the word "null").
const text = (value: string | number | null | undefined) =>
  value === null || value === undefined ? '\\N' : typeof value === 'number' ? String(value) : SPECIAL.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!) : value;

const FIELDS = RECORD_COLUMNS.map((c) => c.field);

/** Records from..to as COPY lines, columns in RECORD_COLUMNS order. */
function copyLines(records: readonly FileRecord[], from: number, to: number): string {
  let out = '';
  for (let i = from; i < to; i++) {
    const r = records[i]!;
    let line = text(r[FIELDS[0]!]);
    for (let c = 1; c < FIELDS.length; c++) line += `\t${text(r[FIELDS[c]!])}`;
    out += `${line}\n`;
  }
  return out;
}

/** The change log's lines of records from..to: path and the record's JSON text. */
function createdLines(records: readonly FileRecord[], from: number, to: number): string {
  let out = '';
  for (let j = from; j < to; j++) out += `${text(records[j]!.file_path)}\t${text(recordJson(records[j]!))}\n`;
  return out;
}

/** Sends lines to the server with one COPY statement, PIECE records at a time as the socket takes them. */
async function copy(client: pg.PoolClient, statement: string, records: readonly FileRecord[], lines: typeof copyLines): Promise<void> {
  const stream: CopyStreamQuery = client.query(copyFrom(statement));
  // Settles when the server has taken the COPY, or refused it (listening from the start, so
  // that a refusal between two writes is not an unhandled 'error').
  const done = new Promise((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  done.catch(() => undefined);
  for (let i = 0; i < records.length; i += PIECE) {
    if (!stream.write(lines(records, i, Math.min(records.length, i + PIECE)))) await Promise.race([once(stream, 'drain'), done]);
  }
  stream.end();
  await done;
}

/** Records into `table`'s record columns. */
export function copyInto(client: pg.PoolClient, table: string, records: readonly FileRecord[]): Promise<void> {
  return copy(client, `COPY ${table} (${COLUMNS}) FROM STDIN`, records, copyLines);
}

/** The change log's entries of records copied straight into the table (all of them were inserted), kept until the commit. */
export function copyCreated(client: pg.PoolClient, records: readonly FileRecord[]): Promise<void> {
  return copy(client, `COPY ${CREATED} (file_path, record) FROM STDIN`, records, createdLines);
}
