import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAP_MISSION, namingMessage, wrongDirectoryMessage } from '../../src/mission/index.js';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree, sha256, useWorldWithData, writeTree } from './client-world.js';
import { CSV_HEADER, RECORD_FIELDS } from '../../src/wire/record.js';

const SPEC_FIELDS = ['file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension'];

describe('sdc upload and sdc query against a real server', { timeout: 120_000 }, () => {
  const tree = sampleTree();
  const paths = Object.keys(tree).sort();
  const ctx = useWorldWithData(tree);

  it('uploads a tree of files from the data directory (the working directory by default)', async () => {
    const result = await runCli(['upload', 'imap'], { cwd: ctx.dataDir, env: ctx.world.env });
    expect(result.stderr).toContain('sdc upload: 4 uploaded');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').sort()).toEqual(paths);
    expect(ctx.world.proxy.seen('/store/', 'PUT')).toHaveLength(4);
    // No API key configured: none sent.
    expect(ctx.world.proxy.requests.every((r) => r.headers['x-api-key'] === undefined)).toBe(true);
  });

  it('queries as an aligned table of the spec fields', async () => {
    const result = await runCli(['query'], { env: ctx.world.env });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(SPEC_FIELDS);
    expect(lines[1]).toMatch(/^-+( +-+)+$/);
    expect(lines.slice(2).map((l) => l.split(/\s+/)[0])).toEqual(paths);
    // Every column starts at the same offset on every line.
    const starts = (line: string) => [...line.matchAll(/(?:^| {2,})(\S)/g)].map((m) => m.index! + m[0].length - 1);
    for (const line of lines) expect(starts(line)).toEqual(starts(lines[0]!));
    expect(result.stderr).toContain('4 files');
  });

  it('queries as a JSON array with size and SHA-256', async () => {
    const result = await runCli(['query', '--output', 'json', '--instrument', 'swe'], { env: ctx.world.env });
    expect(result.code).toBe(0);
    const records = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(records.map((r) => r.file_path)).toEqual(paths.filter((p) => p.includes('/swe/')));
    for (const r of records) {
      expect(r.sha256).toBe(sha256(tree[r.file_path as string]!));
      expect(r.size).toBe(tree[r.file_path as string]!.length);
      expect(Object.keys(r).slice(0, 8)).toEqual(SPEC_FIELDS);
    }
  });

  it('queries as CSV with a header row, filters by version and dates', async () => {
    const result = await runCli(
      ['query', '-o', 'csv', '--version', '*', '--start-date', '20240201', '--end-date', '20240331'],
      { env: ctx.world.env },
    );
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\r\n').filter(Boolean).map((l) => l.split(','));
    expect(rows[0]).toEqual([...RECORD_FIELDS]);
    expect(rows.slice(1).map((r) => r[0])).toEqual([
      'imap/hit/l0/2024/02/imap_hit_l0_raw_20240229_20240229_v00-02.pkts',
      'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf',
    ]);
    expect(rows[1]!.slice(1, 8)).toEqual(['hit', 'l0', 'raw', '20240229', '20240229', 'v00-02', 'pkts']);
  });

  it('prints an empty JSON array and CSV header when nothing matches', async () => {
    const json = await runCli(['query', '-o', 'json', '--instrument', 'idex'], { env: ctx.world.env });
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, []]);
    const csv = await runCli(['query', '-o', 'csv', '--instrument', 'idex'], { env: ctx.world.env });
    expect(csv.stdout).toBe(CSV_HEADER);
  });

  it("reports the server's query error with exit status 1 and no data", async () => {
    const result = await runCli(['query', '--instrument', 'nope'], { env: ctx.world.env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('sdc query: Invalid instrument "nope": expected one of ultra-45');
    // The server's code ends the line (docs/client.md).
    expect(result.stderr.trimEnd()).toMatch(/ \(SDC_INVALID_QUERY\)$/);
  });

  it('takes a second upload of the same bytes as already archived, exit status 0 (docs/client.md)', async () => {
    const path = paths[0]!;
    const result = await runCli(['upload', '--data-dir', ctx.dataDir, join(ctx.dataDir, path)], { env: ctx.world.env });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('already exists.');
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe('sdc upload: 1 already archived');
    expect(result.stdout).toBe(`${path}\n`);
  });

  it("refuses a badly named file locally with the server's own message, before any request", async () => {
    const bad = 'imap/foo/l1a/2024/01/imap_foo_l1a_sci_20240105_20240105_v00-01.cdf';
    await writeTree(ctx.dataDir, { [bad]: Buffer.from('x') });
    const server = await fetch(`${ctx.world.server.url}/upload/${bad}`);
    const before = ctx.world.proxy.requests.length;
    const result = await runCli(['upload', bad], { cwd: ctx.dataDir, env: ctx.world.env });
    expect(ctx.world.proxy.requests.length).toBe(before);
    expect(result.code).toBe(1);
    expect(await server.text()).toBe(namingMessage('instrument', IMAP_MISSION));
    expect(result.stderr).toContain(`sdc upload: ${bad}: ${namingMessage('instrument', IMAP_MISSION)}`);
  });

  it('refuses a file outside its stored folders, or outside the data directory, before any request', async () => {
    const name = 'imap_swe_l1a_sci_20240110_20240110_v00-01.cdf';
    await mkdir(join(ctx.dataDir, 'misc'), { recursive: true });
    await writeTree(ctx.dataDir, { [`misc/${name}`]: Buffer.from('y') });
    const outside = join(ctx.world.scratch, name);
    await copyFile(join(ctx.dataDir, 'misc', name), outside);
    const before = ctx.world.proxy.requests.length;
    const result = await runCli(['upload', '--data-dir', ctx.dataDir, join(ctx.dataDir, 'misc', name), outside], { env: ctx.world.env });
    expect(ctx.world.proxy.requests.length).toBe(before);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(wrongDirectoryMessage(`imap/swe/l1a/2024/01/${name}`));
    expect(result.stderr).toContain(`${outside} is outside the data directory ${ctx.dataDir}`);
    expect(result.stderr).toContain('sdc upload: 2 failed');
  });

  it('takes a relative path from the data directory when the working directory has no such file (docs/api.md, The three endpoints)', async () => {
    const path = 'imap/hit/l1/2024/03/imap_hit_l1_sci_20240301_20240301_v00-01.cdf';
    await writeTree(ctx.dataDir, { [path]: Buffer.from('from the data directory') });
    const result = await runCli(['upload', '--data-dir', ctx.dataDir, path], { cwd: ctx.world.scratch, env: ctx.world.env });
    expect(result.stderr).toContain('sdc upload: 1 uploaded');
    expect(result.stdout).toBe(`${path}\n`);
    expect(result.code).toBe(0);
  });

  it('uploads the good files of a mixed run and still exits 1', async () => {
    const good = 'imap/lo/l2/2024/05/imap_lo_l2_sci_20240501_20240501_v00-01.cdf';
    const bad = 'imap/lo/l2/2024/05/imap_lo_l2_sci_20240501_20240501_v0-1.cdf';
    await writeTree(ctx.dataDir, { [good]: Buffer.from('good'), [bad]: Buffer.from('bad') });
    const result = await runCli(['upload', good, bad], { cwd: ctx.dataDir, env: ctx.world.env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`${good}\n`);
    expect(result.stderr).toContain(namingMessage('version', IMAP_MISSION));
    expect(result.stderr).toContain('sdc upload: 1 uploaded, 1 failed');
  });
});
