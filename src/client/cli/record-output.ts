import { once } from 'node:events';
import { CSV_HEADER, csvCell, csvRow } from '../../wire/record.js';
import { ALL_FIELDS, SPEC_FIELDS, type ArchiveRecord, type RecordField } from '../archive-record.js';

export const OUTPUT_FORMATS = ['table', 'json', 'csv', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Rows read before the table's column widths are fixed; later rows widen their own cells only. */
const TABLE_SAMPLE = 1000;

export interface WriteOptions {
  /** Records trickle in (the live feed): write each at once, fix table widths on the first. */
  readonly live?: boolean;
  /** The fields to write, in this order (`--columns`); default: the spec's for a table, every field otherwise. */
  readonly columns?: readonly RecordField[];
}

/**
 * Writes records as they stream in, so a huge answer never sits in memory:
 * `table` (the spec's fields, aligned columns), `json` (one JSON array of every field),
 * `csv` (header row, then RFC 4180 rows of every field), `ndjson` (one JSON object of
 * every field a line). Returns the number written.
 */
export async function writeRecords(
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  format: OutputFormat,
  out: NodeJS.WritableStream,
  options: WriteOptions = {},
): Promise<number> {
  // A reader that goes away (`| head`) shows up as an 'error' on the stream: end the loop with it.
  // The listener stays: the error of the last write can arrive after the loop is over.
  let failed: Error | undefined;
  out.on('error', (err: Error) => (failed = err));
  // Lines are gathered into chunks of about CHUNK characters: stdout to a file or pipe is a
  // system call per write, and a million one-line writes cost more than the parsing.
  const chunk = options.live ? 0 : CHUNK;
  let pending = '';
  const flush = async () => {
    if (failed) throw failed;
    const text = pending;
    pending = '';
    if (text && !out.write(text)) await once(out, 'drain');
  };
  const write = async (text: string) => {
    pending += text;
    if (pending.length >= chunk) await flush();
  };
  const count = await writeAll(records, format, write, options.live ? 1 : TABLE_SAMPLE, options.columns);
  await flush();
  return count;
}

const CHUNK = 64 * 1024;

async function writeAll(
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  format: OutputFormat,
  write: (text: string) => Promise<void>,
  tableSample: number,
  columns?: readonly RecordField[],
): Promise<number> {
  let count = 0;
  if (format === 'json') {
    await write('[');
    for await (const record of records) {
      await write(`${count++ === 0 ? '\n' : ',\n'}  ${JSON.stringify(pick(record, columns ?? ALL_FIELDS))}`);
    }
    await write(count === 0 ? ']\n' : '\n]\n');
  } else if (format === 'ndjson') {
    for await (const record of records) {
      count++;
      await write(`${JSON.stringify(pick(record, columns ?? ALL_FIELDS))}\n`);
    }
  } else if (format === 'csv') {
    await write(columns ? `${columns.join(',')}\r\n` : CSV_HEADER);
    for await (const record of records) {
      count++;
      await write(columns ? `${columns.map((f) => csvCell(record[f])).join(',')}\r\n` : csvRow(record));
    }
  } else {
    const fields = columns ?? SPEC_FIELDS;
    let sample: ArchiveRecord[] = [];
    let widths: number[] | undefined;
    const flush = async () => {
      if (sample.length === 0) return;
      if (!widths) {
        widths = columnWidths(sample, fields);
        await write(tableRow([...fields], widths));
        await write(tableRow(widths.map((w) => '-'.repeat(w)), widths));
      }
      for (const row of sample) await write(tableRow(fields.map((f) => cell(row[f])), widths));
      sample = [];
    };
    for await (const record of records) {
      count++;
      sample.push(record);
      if (sample.length >= tableSample) await flush();
    }
    await flush();
  }
  return count;
}

function pick(record: ArchiveRecord, fields: readonly RecordField[]): Partial<ArchiveRecord> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (record[f] !== undefined) out[f] = record[f];
  return out as Partial<ArchiveRecord>;
}

function columnWidths(rows: readonly ArchiveRecord[], fields: readonly RecordField[]): number[] {
  return fields.map((f) => Math.max(f.length, ...rows.map((r) => cell(r[f]).length)));
}

/** A table cell: a field's value as text, empty when the record has none. */
function cell(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/** `--columns file_path,size`: the fields named, each known; a usage error names the bad one. */
export function parseColumns(raw: string): RecordField[] {
  const names = raw.split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.find((n) => !(ALL_FIELDS as readonly string[]).includes(n));
  if (unknown !== undefined || names.length === 0) {
    throw new Error(`--columns takes field names separated by commas, from: ${ALL_FIELDS.join(', ')}${unknown === undefined ? '' : `; got ${JSON.stringify(unknown)}`}.`);
  }
  return names as RecordField[];
}

function tableRow(cells: readonly string[], widths: readonly number[]): string {
  return `${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`;
}
