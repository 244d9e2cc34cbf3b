import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_FIELDS } from '../../src/wire/record.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const BYTES = 'wire record\n';

// One record, uploaded with a key and then withdrawn with a replacement (so it has every field
// but the fixity audit's and `release`, which only a numbered release sets; uploader and tombstone
// included), read back through every output there
// is (asked with status=withdrawn): each must carry the same fields of src/wire/record.ts, in
// order; CSV has a column for every field.
const ABSENT_FIELDS = ['verified_date', 'fixity', 'release'];
const PRESENT = RECORD_FIELDS.filter((f) => !ABSENT_FIELDS.includes(f));
const REPLACEMENT = PATH.replace('v00-01', 'v00-02');
describe('the wire record is the same wherever it is read', { timeout: 120_000 }, () => {
  let server: TestServer;
  let expected: Record<string, unknown>;
  beforeAll(async () => {
    server = await startTestServer();
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    for (const path of [PATH, REPLACEMENT]) {
      const address = (await (await fetch(`${server.url}/upload/${path}`, { headers: { 'X-API-Key': key } })).json()) as string;
      expect((await fetch(address, { method: 'PUT', body: BYTES, headers: { 'Content-Type': '' } })).status).toBe(200);
    }
    const { key: curator } = await server.ctx.catalog.keys().create('archive-curator', 'curator');
    const withdrawn = await fetch(`${server.url}/withdraw/${PATH}`, {
      method: 'POST',
      headers: { 'X-API-Key': curator, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'wrong, "calibration" table', superseded_by: REPLACEMENT }),
    });
    expect(withdrawn.status).toBe(200);
    const answer = (await (await fetch(`${server.url}/query?status=withdrawn`)).json()) as Record<string, unknown>[];
    expect(answer).toHaveLength(1);
    expected = answer[0]!;
  });
  afterAll(() => server?.stop());

  it('GET /query as JSON, NDJSON and CSV', async () => {
    expect(Object.keys(expected)).toEqual(PRESENT);
    expect(expected).toMatchObject({ file_path: PATH, size: BYTES.length, uploader: 'swe-pipeline', status: 'withdrawn', withdrawn_by: 'archive-curator', superseded_by: REPLACEMENT });

    const ndjson = await (await fetch(`${server.url}/query?status=withdrawn&format=ndjson`)).text();
    const line = JSON.parse(ndjson.trim()) as Record<string, unknown>;
    expect(Object.keys(line)).toEqual(PRESENT);
    expect(line).toEqual(expected);

    const csv = await (await fetch(`${server.url}/query?status=withdrawn&format=csv`)).text();
    const [header, row] = parse(csv) as string[][];
    expect(header).toEqual([...RECORD_FIELDS]);
    expect(row).toEqual(RECORD_FIELDS.map((f) => String(expected[f] ?? '')));
  });

  it('the OpenAPI schema of a record', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      components: { schemas: { FileRecord: { properties: Record<string, { type: string }> } } };
    };
    const properties = doc.components.schemas.FileRecord.properties;
    expect(Object.keys(properties)).toEqual([...RECORD_FIELDS]);
    for (const field of PRESENT) expect(typeof expected[field]).toBe(properties[field]!.type === 'integer' ? 'number' : 'string');
  });

  it('sdc query --output json, ndjson and csv', async () => {
    const env = { IMAP_DATA_ACCESS_URL: server.url };
    const json = await runCli(['query', '--status', 'withdrawn', '--output', 'json'], { env });
    const [fromJson] = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(Object.keys(fromJson!)).toEqual(PRESENT);
    expect(fromJson).toEqual(expected);

    const ndjson = await runCli(['query', '--status', 'withdrawn', '--output', 'ndjson'], { env });
    expect(JSON.parse(ndjson.stdout.trim())).toEqual(expected);

    const csv = await runCli(['query', '--status', 'withdrawn', '--output', 'csv'], { env });
    expect(parse(csv.stdout)).toEqual([[...RECORD_FIELDS], RECORD_FIELDS.map((f) => String(expected[f] ?? ''))]);
  });
});
