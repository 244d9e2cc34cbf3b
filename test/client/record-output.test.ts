import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ArchiveRecord } from '../../src/client/index.js';
import { writeRecords } from '../../src/client/cli/record-output.js';
import { csvCell } from '../../src/wire/record.js';

function record(i: number, descriptor = 'sci'): ArchiveRecord {
  const day = String(1 + (i % 28)).padStart(2, '0');
  return {
    file_path: `imap/swe/l1a/2024/01/imap_swe_l1a_${descriptor}_202401${day}_202401${day}_v00-01.cdf`,
    instrument: 'swe', data_level: 'l1a', descriptor, start_date: `202401${day}`, end_date: `202401${day}`,
    version: 'v00-01', extension: 'cdf', ingestion_date: '2024-02-01T00:00:00.000Z', size: i, sha256: 'ab'.repeat(32),
  };
}

async function render(records: ArchiveRecord[], format: 'table' | 'json' | 'csv'): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  async function* source() {
    yield* records;
  }
  await writeRecords(source(), format, out);
  return text;
}

describe('query output formats', () => {
  it('quotes CSV cells per RFC 4180', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(12)).toBe('12');
    expect(csvCell(undefined)).toBe('');
  });

  it('writes the table header once, before the rows, even past the width sample', async () => {
    const rows = Array.from({ length: 1_200 }, (_, i) => record(i, i === 1_100 ? 'a-very-long-descriptor' : 'sci'));
    const lines = (await render(rows, 'table')).trimEnd().split('\n');
    expect(lines).toHaveLength(1_202);
    expect(lines.filter((l) => l.startsWith('file_path'))).toHaveLength(1);
    expect(lines[0]!.startsWith('file_path')).toBe(true);
    expect(lines[1 + 1_101]).toContain('a-very-long-descriptor');
  });

  it('writes valid JSON for none, one and many records', async () => {
    expect(JSON.parse(await render([], 'json'))).toEqual([]);
    expect(JSON.parse(await render([record(1)], 'json'))).toEqual([record(1)]);
    expect(JSON.parse(await render([record(1), record(2)], 'json'))).toHaveLength(2);
  });

  it('writes nothing for an empty table', async () => {
    expect(await render([], 'table')).toBe('');
  });
});
