import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchiveRecord } from '../../src/client/index.js';
import { writeRecords } from '../../src/client/cli/record-output.js';
import { RECORD_FIELDS } from '../../src/wire/record.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const GENERATED_DESCRIPTORS = scale(25, 200);
const GENERATED_RECORDS = scale(300, 3000);

/** What a spreadsheet evaluates: a cell whose text begins with one of these (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Descriptors the naming rules accept that begin like a formula: `-1-67051`, `-cmd`, `--`. */
const hostileDescriptor = fc.stringMatching(/^-[A-Za-z0-9-]{0,12}$/);
/** Any text a cell may hold, often beginning like a formula. */
const cellText = fc.oneof(
  fc.tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r'), fc.string({ maxLength: 20 })).map(([a, b]) => a + b),
  fc.string({ maxLength: 20 }),
);

/** Every cell of every data row of a CSV text, unquoted as a spreadsheet reads it. */
function dataCells(csv: string): string[][] {
  const [header, ...rows] = parse(csv, { relax_column_count: true }) as string[][];
  expect(header).toEqual([...RECORD_FIELDS]);
  return rows;
}

async function cliCsv(records: ArchiveRecord[]): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  await writeRecords(records, 'csv', out);
  return text;
}

describe('CSV cells never begin like a formula; JSON and NDJSON stay exact', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  it('format=csv: a stored descriptor beginning with - is neutralised, while JSON and NDJSON carry it as it is', async () => {
    const descriptors = fc.sample(hostileDescriptor, GENERATED_DESCRIPTORS);
    const stored = new Set<string>();
    for (const [i, descriptor] of descriptors.entries()) {
      const day = String(1 + (i % 28)).padStart(2, '0');
      const path = `imap/swe/l1a/2024/01/imap_swe_l1a_${descriptor}_202401${day}_202401${day}_v00-01.cdf`;
      const res = await uploadFile(server.url, path, descriptor);
      // A generated descriptor may repeat (409) or break another naming rule (400): the others are kept.
      if (res.status === 200) stored.add(descriptor);
    }
    expect(stored.size).toBeGreaterThan(0);

    const rows = dataCells(await (await fetch(`${server.url}/query?format=csv`)).text());
    expect(rows.length).toBeGreaterThanOrEqual(stored.size);
    for (const row of rows) for (const cell of row) expect(cell, JSON.stringify(row)).not.toMatch(FORMULA_START);
    const column = RECORD_FIELDS.indexOf('descriptor');
    expect(new Set(rows.map((r) => r[column]))).toEqual(new Set([...stored].map((d) => `'${d}`)));

    const json = (await (await fetch(`${server.url}/query`)).json()) as { descriptor: string }[];
    expect(new Set(json.map((r) => r.descriptor))).toEqual(stored);
    const ndjson = (await (await fetch(`${server.url}/query?format=ndjson`)).text()).trim().split('\n');
    expect(new Set(ndjson.map((l) => (JSON.parse(l) as { descriptor: string }).descriptor))).toEqual(stored);
    recordFigures('csv-injection-server', { descriptors_stored: stored.size });
  }, 120_000);

  it('sdc query --output csv: no generated cell begins like a formula, and each reads back as written with its mark', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ descriptor: cellText, instrument: cellText, uploader: cellText }), { minLength: 1, maxLength: 5 }), async (values) => {
        const records = values.map(
          (v, i) =>
            ({
              file_path: `imap/swe/l1a/2024/01/f${i}.cdf`, instrument: v.instrument, data_level: 'l1a', descriptor: v.descriptor,
              start_date: '20240101', end_date: '20240101', version: 'v00-01', extension: 'cdf',
              ingestion_date: '2024-02-01T00:00:00.000Z', size: i, sha256: 'ab'.repeat(32), uploader: v.uploader,
            }) as ArchiveRecord,
        );
        const rows = dataCells(await cliCsv(records));
        expect(rows).toHaveLength(records.length);
        for (const [i, row] of rows.entries()) {
          for (const [j, field] of RECORD_FIELDS.entries()) {
            const original = String(records[i]![field] ?? '');
            expect(row[j]).not.toMatch(FORMULA_START);
            expect(row[j]).toBe(FORMULA_START.test(original) ? `'${original}` : original);
          }
        }
      }),
      { numRuns: GENERATED_RECORDS },
    );
  }, 120_000);
});
