import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import type { ArchiveRecord } from '../archive-record.js';

export interface SpooledRecords {
  readonly count: number;
  /** Sum of the records' sizes, bytes (records without a size count 0). */
  readonly bytes: number;
  records(): AsyncIterable<ArchiveRecord>;
  remove(): Promise<void>;
}

/**
 * Reads a whole query answer into a temporary file (one record a line) before any
 * download starts: memory stays flat, the server's answer is not held open for the
 * hours a large download can take, and the run knows its total for the progress bar.
 */
export async function spoolRecords(source: AsyncIterable<ArchiveRecord>): Promise<SpooledRecords> {
  const dir = await mkdtemp(join(tmpdir(), 'sdc-query-'));
  const file = join(dir, 'records.ndjson');
  const remove = () => rm(dir, { recursive: true, force: true });
  let count = 0;
  let bytes = 0;
  const out = createWriteStream(file);
  try {
    for await (const record of source) {
      count++;
      bytes += record.size ?? 0;
      if (!out.write(`${JSON.stringify(record)}\n`)) await once(out, 'drain');
    }
    out.end();
    await finished(out);
  } catch (err) {
    out.destroy();
    await remove();
    throw err;
  }
  return {
    count,
    bytes,
    async *records() {
      for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
        if (line) yield JSON.parse(line) as ArchiveRecord;
      }
    },
    remove,
  };
}
