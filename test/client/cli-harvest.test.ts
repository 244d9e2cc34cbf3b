import { RECORD_FIELDS } from '../../src/wire/record.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/catalog/synthetic-records.js';
import { Client } from '../../src/client/index.js';
import { NEXT_PAGE_PREFIX } from '../../src/client/cli/query-command.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { runCli } from '../helpers/run-cli.js';
import { startClientWorld, writeTree, type ClientWorld } from './client-world.js';

const ALL_FIELDS = [...RECORD_FIELDS];

/** Stored path of a swe l1a sci file. */
const swe = (start: string, end: string, version: string) =>
  `imap/swe/l1a/${start.slice(0, 4)}/${start.slice(4, 6)}/imap_swe_l1a_sci_${start}_${end}_${version}.cdf`;

function ndjson(text: string): Record<string, unknown>[] {
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('sdc query and sdc download --query with the harvesting options, against a real server', { timeout: 180_000 }, () => {
  let world: ClientWorld;
  // 2500 synthetic records, indexed one a second from 2025-01-01T00:00:00Z (record i at i s).
  const seeded = [...syntheticRecords(IMAP_MISSION, 2500)];
  const seededPaths = seeded.map((r) => r.file_path).sort();

  beforeAll(async () => {
    world = await startClientWorld();
    await world.server.ctx.catalog.insertMany(seeded);
  });
  afterAll(() => world.stop());

  it('--since returns only files indexed at or after the instant; --until bounds the other side', async () => {
    const since = seeded[2400]!.ingestion_date;
    const result = await runCli(['query', '--since', since, '--output', 'ndjson'], { env: world.env });
    expect(result.code).toBe(0);
    const paths = ndjson(result.stdout).map((r) => r.file_path);
    expect(paths).toEqual(seeded.slice(2400).map((r) => r.file_path).sort());
    const window = await runCli(['query', '--since', seeded[10]!.ingestion_date, '--until', seeded[19]!.ingestion_date, '-o', 'ndjson'], { env: world.env });
    expect(ndjson(window.stdout).map((r) => r.file_path)).toEqual(seeded.slice(10, 20).map((r) => r.file_path).sort());
    // A bare date covers its day (UTC): every seeded file was indexed on 2025-01-01.
    const day = await runCli(['query', '--since', '20250102', '-o', 'ndjson'], { env: world.env });
    expect([day.code, day.stdout]).toEqual([0, '']);
  });

  it('refuses a --since it cannot read naming the flag typed, as a usage error (exit 2)', async () => {
    const result = await runCli(['query', '--since', 'last tuesday'], { env: world.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--since takes YYYYMMDD, YYYY-MM-DD or an ISO-8601 date-time with a zone');
    expect(result.stderr).not.toContain('ingestion_start_date');
  });

  it('--limit prints one page and the next cursor on stderr; following the cursors walks every record exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const result = await runCli(['query', '--limit', '1000', '--output', 'csv', ...(cursor ? ['--cursor', cursor] : [])], { env: world.env });
      expect(result.code).toBe(0);
      const rows = parse(result.stdout, { columns: true }) as Record<string, string>[];
      expect(rows.length).toBeLessThanOrEqual(1000);
      seen.push(...rows.map((r) => r.file_path!));
      pages++;
      if (pages === 1) {
        // Files indexed during the walk sort among the others; the walk still sees each original once.
        await world.server.ctx.catalog.insertMany([...syntheticRecords(IMAP_MISSION, 300, 2500)]);
      }
      const next = result.stderr.split('\n').find((line) => line.startsWith(NEXT_PAGE_PREFIX));
      if (!next) break;
      cursor = next.slice(NEXT_PAGE_PREFIX.length);
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seededPaths.filter((p) => !seen.includes(p))).toEqual([]);
    expect(seen).toEqual([...seen].sort());
  });

  it('the SDK walks every page with pages(), from page() totals and cursors', async () => {
    const client = new Client({ url: world.url });
    const filter = { instrument: 'swe', ingestion_end_date: seeded.at(-1)!.ingestion_date } as const;
    const expected = seeded.filter((r) => r.instrument === 'swe').map((r) => r.file_path).sort();
    const first = await client.page({ ...filter, limit: 40 });
    expect([first.total, first.records.length, typeof first.nextCursor]).toEqual([expected.length, 40, 'string']);
    const walked: string[] = [];
    let pages = 0;
    for await (const page of client.pages({ ...filter, limit: 40 })) {
      pages++;
      walked.push(...page.records.map((r) => r.file_path));
    }
    expect(walked).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 40));
    const rest = await client.query({ ...filter, cursor: first.nextCursor });
    expect(rest.map((r) => r.file_path)).toEqual(expected.slice(40));
    await client.close();
  });

  it('--output csv (or --format csv) parses with a CSV parser into every field', async () => {
    for (const flag of ['--output', '--format']) {
      const result = await runCli(['query', '--instrument', 'mag', '--limit', '5', flag, 'csv'], { env: world.env });
      expect(result.code).toBe(0);
      const rows = parse(result.stdout, { columns: true }) as Record<string, string>[];
      expect(Object.keys(rows[0]!)).toEqual(ALL_FIELDS);
      expect(rows).toHaveLength(5);
      expect(rows.every((r) => r.instrument === 'mag' && /^[0-9a-f]{64}$/.test(r.sha256!))).toBe(true);
    }
  });

  it('--sort=-ingestion_date orders newest first; a cursor keeps its sort', async () => {
    const first = await runCli(['query', '--sort=-ingestion_date', '--limit', '3', '-o', 'ndjson'], { env: world.env });
    const dates = ndjson(first.stdout).map((r) => r.ingestion_date as string);
    expect(dates).toEqual([...dates].sort().reverse());
    const cursor = first.stderr.split('\n').find((l) => l.startsWith(NEXT_PAGE_PREFIX))!.slice(NEXT_PAGE_PREFIX.length);
    const next = await runCli(['query', '--sort', '-ingestion_date', '--limit', '3', '-o', 'ndjson', '--cursor', cursor], { env: world.env });
    expect(ndjson(next.stdout).every((r) => (r.ingestion_date as string) <= dates[2]!)).toBe(true);
    const wrong = await runCli(['query', '--limit', '3', '--cursor', cursor], { env: world.env });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('this cursor belongs to sort=-ingestion_date');
  });

  it('--latest keeps the highest version of each product (v01-10 over v01-09), start dates apart; --overlap selects spans', async () => {
    const client = new Client({ url: world.url });
    const dataDir = await world.folder('latest-src');
    const files = {
      [swe('20300105', '20300105', 'v01-09')]: Buffer.from('old'),
      [swe('20300105', '20300105', 'v01-10')]: Buffer.from('new'),
      [swe('20300106', '20300108', 'v00-01')]: Buffer.from('other day'),
    };
    await writeTree(dataDir, files);
    for (const path of Object.keys(files)) await client.upload(join(dataDir, path), { dataDir });
    await client.close();
    const latest = await runCli(['query', '--instrument', 'swe', '--start-date', '20300101', '--latest', '-o', 'ndjson'], { env: world.env });
    expect(ndjson(latest.stdout).map((r) => r.file_path)).toEqual([swe('20300105', '20300105', 'v01-10'), swe('20300106', '20300108', 'v00-01')]);
    const both = await runCli(['query', '--latest', '--version', 'v01-09'], { env: world.env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--latest' cannot be used with option '--version");

    // A file from the 6th to the 8th meets the 7th only when spans count.
    const day7 = ['query', '--instrument', 'swe', '--start-date', '20300107', '--end-date', '20300107', '-o', 'ndjson'];
    expect(ndjson((await runCli(day7, { env: world.env })).stdout)).toEqual([]);
    expect(ndjson((await runCli([...day7, '--overlap'], { env: world.env })).stdout).map((r) => r.file_path)).toEqual([swe('20300106', '20300108', 'v00-01')]);

    // sdc download --query takes the same filter flags.
    const mirror = await world.folder('latest-mirror');
    const download = await runCli(['download', '--query', '--instrument', 'swe', '--start-date', '20300101', '--latest', '--data-dir', mirror], { env: world.env });
    expect(download.code).toBe(0);
    expect(download.stdout.trim().split('\n').sort()).toEqual([join(mirror, swe('20300105', '20300105', 'v01-10')), join(mirror, swe('20300106', '20300108', 'v00-01'))]);
    expect(await readFile(join(mirror, swe('20300105', '20300105', 'v01-10')), 'utf8')).toBe('new');
  });
});
