import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInstant } from '../../src/wire/instant.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const FILE = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';

/**
 * One instant parser (src/wire/instant.ts) for the server's query, the CLI's flags and
 * `sdc purge` (docs/trust.md "Attacks tried"): an impossible date-time is refused everywhere
 * rather than rolled into another day, an offset the server refuses is a usage error, and a
 * purge date in the future (every withdrawal so far) needs --yes.
 */
describe('instants: what one part refuses, all refuse', { timeout: 120_000 }, () => {
  let server: TestServer;
  const cli = (...args: string[]) => runCli(args, { env: { IMAP_DATA_ACCESS_URL: server.url } });
  const purge = (...args: string[]) => runCli(['purge', '--home', server.home, ...args]);

  beforeAll(async () => {
    server = await startTestServer();
    expect((await uploadFile(server.url, FILE, 'withdrawn bytes\n')).status).toBe(200);
    await server.ctx.catalog.withdraw(FILE, { withdrawn_date: new Date().toISOString(), withdrawn_reason: 'bad', withdrawn_by: 'curator' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('parses real instants only', () => {
    expect(parseInstant('2024-01-05T13:00+01:00')).toBe('2024-01-05T12:00:00.000Z');
    expect(parseInstant('20240105', { end: true })).toBe('2024-01-05T23:59:59.999Z');
    expect(parseInstant('2024-01-05', { dashedDays: true })).toBe('2024-01-05T00:00:00.000Z');
    for (const impossible of ['2026-02-30T00:00Z', '2026-01-01T24:00Z', '2026-01-01T10:60Z', '2024-01-05T12:00+0100', '2024-01-05T12:00+24:00', '20240230', '2024-01-05']) {
      expect(parseInstant(impossible), impossible).toBeUndefined();
    }
  });

  it('the server refuses an impossible date-time instead of reading it as another day (400)', async () => {
    const res = await fetch(`${server.url}/query?ingestion_start_date=2026-02-30T00:00Z`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatch(/ingestion_start_date/);
  });

  it('sdc query refuses what the server would: an hhmm offset, an impossible date-time (usage, exit 2, naming the flag)', async () => {
    for (const since of ['2024-01-05T12:00+0100', '2026-02-30T00:00Z']) {
      const run = await cli('query', '--since', since);
      expect(run.code, since).toBe(2);
      expect(run.stderr, since).toContain(`--since takes YYYYMMDD, YYYY-MM-DD or an ISO-8601 date-time with a zone`);
    }
    expect((await cli('query', '--since', '2024-01-05T12:00+01:00')).code).toBe(0);
  });

  it('sdc purge refuses an impossible date-time, and a future date without --yes; --dry-run says what it includes', async () => {
    const stored = join(server.home, 'store', ...FILE.split('/'));
    const impossible = await purge('--withdrawn-before', '2026-02-30T00:00Z');
    expect(impossible.code).toBe(2);
    expect(impossible.stderr).toMatch(/expected YYYY-MM-DD or an ISO-8601 date-time/);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const unconfirmed = await purge('--withdrawn-before', tomorrow);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/is in the future: it includes every file withdrawn so far.*--yes/s);
    expect(existsSync(stored)).toBe(true);

    const dry = await purge('--withdrawn-before', tomorrow, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would delete ${FILE}`);
    const confirmed = await purge('--withdrawn-before', tomorrow, '--yes');
    expect(confirmed.code).toBe(0);
    expect(existsSync(stored)).toBe(false);
  });
});
