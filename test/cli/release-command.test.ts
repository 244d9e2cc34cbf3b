import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const V1 = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const V2 = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-02.cdf';
const MAG = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const name = (path: string) => path.split('/').pop()!;

// `sdc release create|list|show|retract`, `sdc query --release`, `sdc download --release` as a
// user runs them (child processes), and the SDK's methods, against a real server (docs/client.md "Releases").
describe('sdc release and the SDK\'s releases', { timeout: 180_000 }, () => {
  let server: TestServer;
  let curator: string;
  let dir: string;
  const env = (more: Record<string, string> = {}) => ({ IMAP_DATA_ACCESS_URL: server.url, ...more });

  beforeAll(async () => {
    server = await startTestServer();
    for (const path of [V1, V2, MAG]) expect((await uploadFile(server.url, path, `bytes of ${path}\n`)).status).toBeLessThan(300);
    curator = (await server.ctx.catalog.keys().create('archive-curator', 'curator')).key;
    dir = await mkdtemp(join(tmpdir(), 'sdc-release-cli-'));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('create: usage errors exit 2; by filter options (latest versions), the answer on stdout and a line on stderr', async () => {
    const none = await runCli(['release', 'create', '--title', 't'], { env: env({ IMAP_API_KEY: curator }) });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exactly one of --files, --from-file or filter options/);
    const two = await runCli(['release', 'create', '--title', 't', '--files', V1, '--instrument', 'swe'], { env: env({ IMAP_API_KEY: curator }) });
    expect(two.code).toBe(2);
    const denied = await runCli(['release', 'create', '--title', 't', '--instrument', 'swe'], { env: env() });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^sdc release create: /);
    const made = await runCli(['release', 'create', '--title', 'SWE January', '--instrument', 'swe'], { env: env({ IMAP_API_KEY: curator }) });
    expect(made.stderr).toMatch(/^release 1: 1 files, .*public from \S+\n$/);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ release: 1, files: 1, href: '/releases/1' });
  });

  it('create from a list file, early; list as a table and as JSON', async () => {
    const list = join(dir, 'files.txt');
    await writeFile(list, `# calibration\n${name(V1)}\n\n${MAG}\n`);
    const made = await runCli(['release', 'create', '--title', 'Early look', '--from-file', list, '--early', '--exclude', name(V1), '--api-key', curator], { env: env() });
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ release: 2, files: 1 });
    const table = await runCli(['release', 'list'], { env: env() });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(table.stdout).toMatch(/^ {3}2 {2}published .* Early look$/m);
    const json = await runCli(['release', 'list', '--output', 'json'], { env: env() });
    expect((JSON.parse(json.stdout) as { kind: string }[]).map((r) => r.kind)).toEqual(['release', 'early-release']);
  });

  it('show in every output; query --release and download --release give exactly its files', async () => {
    const shown = JSON.parse((await runCli(['release', 'show', '2'], { env: env() })).stdout) as { files: { file_path: string }[] };
    expect(shown.files.map((f) => f.file_path)).toEqual([MAG]);
    const csv = await runCli(['release', 'show', '1', '--output', 'csv'], { env: env() });
    expect(csv.stdout.split('\n')[0]).toBe('file_path,size,sha256');
    expect(csv.stdout).toContain(`${V2},`);
    expect((await runCli(['release', 'show', '1', '--output', 'metalink'], { env: env() })).stdout).toContain(`<file name="${V2}">`);
    expect(JSON.parse((await runCli(['release', 'show', '1', '--output', 'datacite'], { env: env() })).stdout)).toMatchObject({ schemaVersion: 'http://datacite.org/schema/kernel-4', titles: [{ title: 'SWE January' }] });
    expect((await runCli(['release', 'show', 'x'], { env: env() })).code).toBe(2);
    const missing = await runCli(['release', 'show', '9'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/There is no release 9/);

    const queried = await runCli(['query', '--release', '1', '--output', 'json'], { env: env() });
    expect((JSON.parse(queried.stdout) as { file_path: string }[]).map((r) => r.file_path)).toEqual([V2]);
    const data = join(dir, 'data');
    const got = await runCli(['download', '--release', '2'], { env: env({ IMAP_DATA_DIR: data }) });
    expect(got.code).toBe(0);
    expect(await readFile(join(data, MAG), 'utf8')).toBe(`bytes of ${MAG}\n`);
  });

  it('retract: the release as it now is on stdout; again: exit 3', async () => {
    const done = await runCli(['release', 'retract', '2', '--reason', 'superseded', '--api-key', curator], { env: env() });
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ release: 2, status: 'retracted', retracted_reason: 'superseded', retracted_by: 'archive-curator' });
    expect(done.stderr).toMatch(/^retracted release 2 on \S+\n$/);
    const again = await runCli(['release', 'retract', '2', '--reason', 'again', '--api-key', curator], { env: env() });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/already retracted/);
  });

  it('the SDK: createRelease, releases, release, releaseDocument, retractRelease, and query({ release })', async () => {
    const client = new Client({ url: server.url, apiKey: curator });
    try {
      const created = await client.createRelease({ title: 'By the SDK', files: [name(V1)], releaseDate: '2020-01-01T00:00:00Z' });
      expect(created).toMatchObject({ release: 3, files: 1 });
      // A date in the past is now.
      expect(Date.parse(created.release_date)).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z'));
      expect((await client.releases()).map((r) => r.release)).toEqual([1, 2, 3]);
      expect((await client.release(3)).files.map((f) => f.file_path)).toEqual([V1]);
      expect(await client.releaseDocument(3, 'csv')).toMatch(/^file_path,size,sha256\n/);
      expect((await client.query({ release: 3 })).map((r) => r.file_path)).toEqual([V1]);
      expect((await client.retractRelease(3, 'test')).status).toBe('retracted');
      await expect(client.retractRelease(3, 'again')).rejects.toMatchObject({ name: 'ConflictError', serverCode: 'SDC_ALREADY_RETRACTED' });
      await expect(client.createRelease({ title: 't', files: [] })).rejects.toMatchObject({ name: 'InvalidRequestError' });
    } finally {
      await client.close();
    }
  });
});
