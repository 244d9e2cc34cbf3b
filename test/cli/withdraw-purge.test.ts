import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const V1 = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const V2 = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-02.cdf';
const name = (path: string) => path.split('/').pop()!;

// `sdc withdraw` (a client command) and `sdc purge` (an operator command) as a user runs them:
// child processes, against a real server and its real catalog and store.
describe('sdc withdraw and sdc purge', { timeout: 120_000 }, () => {
  let server: TestServer;
  let curator: string;
  let uploader: string;
  const env = () => ({ IMAP_DATA_ACCESS_URL: server.url });

  beforeAll(async () => {
    server = await startTestServer();
    for (const path of [V1, V2]) expect((await uploadFile(server.url, path, `bytes of ${path}\n`)).status).toBeLessThan(300);
    curator = (await server.ctx.catalog.keys().create('archive-curator', 'curator')).key;
    uploader = (await server.ctx.catalog.keys().create('swe-pipeline')).key;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses without --reason (usage, exit 2) and with an uploader key (exit 1, the server\'s text)', async () => {
    const usage = await runCli(['withdraw', name(V1)], { env: { ...env(), IMAP_API_KEY: curator } });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/required option '--reason <text>'/);
    const denied = await runCli(['withdraw', name(V1), '--reason', 'bad'], { env: { ...env(), IMAP_API_KEY: uploader } });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/sdc withdraw: .*"swe-pipeline" is an uploader key: this call needs a curator key/);
    expect(denied.stdout).toBe('');
  });

  it('withdraws with a replacement: the record on stdout, a line on stderr; again: exit 3', async () => {
    const done = await runCli(['withdraw', name(V1), '--reason', 'wrong calibration table', '--superseded-by', name(V2), '--api-key', curator], { env: env() });
    expect(done.code).toBe(0);
    const record = JSON.parse(done.stdout) as Record<string, unknown>;
    expect(record).toMatchObject({ file_path: V1, status: 'withdrawn', withdrawn_reason: 'wrong calibration table', withdrawn_by: 'archive-curator', superseded_by: V2 });
    expect(done.stderr).toMatch(new RegExp(`^withdrew ${V1} on \\S+, superseded by ${V2}\\n$`));
    const again = await runCli(['withdraw', V1, '--reason', 'again', '--api-key', curator], { env: env() });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/already withdrawn on .* by archive-curator/);
    // sdc query leaves it out unless asked.
    const listed = await runCli(['query', '--instrument', 'swe', '--output', 'json'], { env: env() });
    expect((JSON.parse(listed.stdout) as { file_path: string }[]).map((r) => r.file_path)).toEqual([V2]);
  });

  it('purges the bytes of files withdrawn before a date: --dry-run first, then for real, then idempotent; the record stays', async () => {
    const file = join(server.home, 'store', ...V1.split('/'));
    expect(existsSync(file)).toBe(true);
    const operator = (...args: string[]) => runCli(['purge', '--home', server.home, ...args]);

    const bad = await operator('--withdrawn-before', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected YYYY-MM-DD or an ISO-8601 date-time/);

    const before = await operator('--withdrawn-before', '2020-01-01');
    expect(before.code).toBe(0);
    expect(before.stdout).toContain('deleted the bytes of 0 file(s) withdrawn before 2020-01-01T00:00:00.000Z');
    expect(before.stdout).toContain('kept the bytes of 1 file(s) withdrawn since');

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const dry = await operator('--withdrawn-before', tomorrow, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`^would delete ${V1} \\(withdrawn \\S+\\)$`, 'm'));
    expect(existsSync(file)).toBe(true);

    // A date in the future includes the latest withdrawals: confirmed with --yes.
    const real = await operator('--withdrawn-before', tomorrow, '--yes');
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(new RegExp(`^deleted ${V1} \\(withdrawn \\S+\\)$`, 'm'));
    expect(real.stdout).toContain('deleted the bytes of 1 file(s)');
    expect(existsSync(file)).toBe(false);

    const again = await operator('--withdrawn-before', tomorrow, '--yes');
    expect(again.stdout).toContain('deleted the bytes of 0 file(s)');
    expect(again.stdout).toContain('1 file(s) withdrawn before then had no bytes left (purged earlier)');

    // The tombstone stays: the record, the 410, the name taken; the replacement is untouched.
    const withdrawn = (await (await fetch(`${server.url}/query?status=withdrawn`)).json()) as { file_path: string }[];
    expect(withdrawn.map((r) => r.file_path)).toEqual([V1]);
    expect((await fetch(`${server.url}/download/${V1}`, { redirect: 'manual' })).status).toBe(410);
    expect((await fetch(`${server.url}/upload/${V1}`, { headers: { 'X-API-Key': uploader } })).status).toBe(409);
    expect((await fetch(`${server.url}/download/${V2}`, { redirect: 'manual' })).status).toBe(302);
  });
});
