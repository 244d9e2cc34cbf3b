import { once } from 'node:events';
import { CSV_HEADER, csvRow } from '../../wire/record.js';
import { ALL_FIELDS, SPEC_FIELDS, type ArchiveRecord, type RecordField } from '../archive-record.js';

export const OUTPUT_FORMATS = ['table', 'json', 'csv', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Rows read before the table's column widths are fixed; later rows widen their own cells only. */
const TABLE_SAMPLE = 1000;

export interface WriteOptions {
  /** Records trickle in (the live feed): write each at once, fix table widths on the first. */
  readonly live?: boolean;
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
  const count = await writeAll(records, format, write, options.live ? 1 : TABLE_SAMPLE);
  await flush();
  return count;
}

const CHUNK = 64 * 1024;

async function writeAll(
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
  format: OutputFormat,
  write: (text: string) => Promise<void>,
  tableSample: number,
): Promise<number> {
  let count = 0;
  if (format === 'json') {
    await write('[');
    for await (const record of records) {
      await write(`${count++ === 0 ? '\n' : ',\n'}  ${JSON.stringify(pick(record, ALL_FIELDS))}`);
    }
    await write(count === 0 ? ']\n' : '\n]\n');
  } else if (format === 'ndjson') {
    for await (const record of records) {
      count++;
      await write(`${JSON.stringify(pick(record, ALL_FIELDS))}\n`);
    }
  } else if (format === 'csv') {
    await write(CSV_HEADER);
    for await (const record of records) {
      count++;
      await write(csvRow(record));
    }
  } else {
    let sample: ArchiveRecord[] = [];
    let widths: number[] | undefined;
    const flush = async () => {
      if (sample.length === 0) return;
      if (!widths) {
        widths = columnWidths(sample);
        await write(tableRow([...SPEC_FIELDS], widths));
        await write(tableRow(widths.map((w) => '-'.repeat(w)), widths));
      }
      for (const row of sample) await write(tableRow(SPEC_FIELDS.map((f) => row[f]), widths));
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

function columnWidths(rows: readonly ArchiveRecord[]): number[] {
  return SPEC_FIELDS.map((f) => Math.max(f.length, ...rows.map((r) => r[f].length)));
}

function tableRow(cells: readonly string[], widths: readonly number[]): string {
  return `${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`;
}
