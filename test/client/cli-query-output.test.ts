import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { sampleTree } from './client-world.js';
import { useUploadedWorld } from './uploaded-world.js';

describe('sdc query output: --columns, both date spellings, errors naming the flag typed', { timeout: 120_000 }, () => {
  const tree = sampleTree();
  const ctx = useUploadedWorld(tree);

  it('shows the columns asked for, in order, in a table and in CSV', async () => {
    const table = await runCli(['query', '--sort=-ingestion_date', '--columns', 'file_path,ingestion_date,size'], { env: ctx.world.env });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['file_path', 'ingestion_date', 'size']);
    const sizes = lines.slice(2).map((l) => l.split(/\s+/));
    for (const [path, date, size] of sizes) {
      expect(date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(Number(size)).toBe(tree[path!]!.length);
    }
    const csv = await runCli(['query', '-o', 'csv', '--columns', 'size,file_path'], { env: ctx.world.env });
    expect(csv.stdout.split('\r\n')[0]).toBe('size,file_path');
    expect(csv.stdout.split('\r\n')[1]).toMatch(/^\d+,imap\//);
  });

  it('refuses an unknown column naming --columns (usage error)', async () => {
    const result = await runCli(['query', '--columns', 'file_path,colour'], { env: ctx.world.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--columns takes field names');
    expect(result.stderr).toContain('"colour"');
  });

  it('takes dates as YYYYMMDD or YYYY-MM-DD, and names the flag typed when neither', async () => {
    const dashed = await runCli(['query', '-o', 'json', '--start-date', '2024-02-01', '--end-date', '2024-03-31', '--since', '2020-01-01'], { env: ctx.world.env });
    const plain = await runCli(['query', '-o', 'json', '--start-date', '20240201', '--end-date', '20240331', '--since', '20200101'], { env: ctx.world.env });
    expect(dashed.code).toBe(0);
    expect(JSON.parse(dashed.stdout)).toEqual(JSON.parse(plain.stdout));
    expect((JSON.parse(dashed.stdout) as unknown[]).length).toBe(2);
    const bad = await runCli(['query', '--since', '1 June'], { env: ctx.world.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since takes YYYYMMDD, YYYY-MM-DD or an ISO-8601 date-time');
    expect(bad.stderr).not.toContain('ingestion_start_date');
  });

  it('refuses sdc watch --until in the past instead of waiting forever', async () => {
    const result = await runCli(['watch', '--until', '20240101'], { env: ctx.world.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--until 20240101 is in the past');
  });
});
