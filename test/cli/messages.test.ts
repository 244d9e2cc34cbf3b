import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A loopback port with a listener on it (taken), or none (closed again: nothing answers there). */
async function listener(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (server: Server) => (server.address() as { port: number }).port;

// Each message as a user meets it: the CLI as a child process, the server over HTTP.
describe('messages point the right way', { timeout: 120_000 }, () => {
  let server: TestServer;
  let scratch: string;
  beforeAll(async () => {
    server = await startTestServer();
    scratch = await mkdtemp(join(tmpdir(), 'sdc-messages-'));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('an impossible date keeps the spec text and says the date does not exist; a wrong mission names the served one', async () => {
    const date = await fetch(`${server.url}/upload/imap_swe_l1a_sci_20240231_20240231_v00-01.cdf`);
    expect(date.status).toBe(400);
    expect(await date.text()).toBe(
      'Invalid start date format. Please use YYYYMMDD format. 20240231 has that format but is not a date that exists: February 2024 has 29 days.',
    );
    const mission = await fetch(`${server.url}/upload/mars_swe_l1a_sci_20240105_20240105_v00-01.cdf`);
    expect(await mission.text()).toBe('Invalid mission. This service serves the mission imap: file names start with imap_.');
  });

  it('sdc download of a file the archive lacks says so in CLI terms, not with a /download/ path', async () => {
    const name = 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
    const result = await runCli(['download', name], { cwd: scratch, env: { IMAP_DATA_ACCESS_URL: server.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`sdc download: ${name}: not in the archive (the service has no file ${name}).`);
    expect(result.stderr).toContain(`sdc query --file-path ${name}`);
    expect(result.stderr).not.toContain('/download/');
  });

  it('a service that is not there: ECONNREFUSED, then a hint to check --url', async () => {
    const gone = await listener();
    const url = `http://127.0.0.1:${portOf(gone)}`;
    await new Promise((resolve) => gone.close(resolve));
    const result = await runCli(['query', '--url', url, '--retries', '1'], { cwd: scratch });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      `sdc query: GET ${url}/query: ECONNREFUSED. Nothing answers at ${url}: is the service running there? Check --url or IMAP_DATA_ACCESS_URL.`,
    );
    // The retry line reports the failure only.
    expect(lines[0]).not.toContain('Check --url');
  });

  it('a taken port: a hint, before the start-up work (no catalog is opened)', async () => {
    const taken = await listener();
    try {
      const home = join(scratch, 'serve-home');
      const result = await runCli(['serve', '--port', String(portOf(taken)), '--home', home, '--log-level', 'warn'], { cwd: scratch });
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `sdc serve: port ${portOf(taken)} on 127.0.0.1 is already in use (another sdc serve?). Stop the process that holds it, or choose another port with --port <n> or PORT.`,
      );
      expect(existsSync(join(home, 'catalog.db'))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('sdc watch --last-event-id bogus says what a valid id looks like, and offers no id to resume with', async () => {
    const result = await runCli(['watch', '--last-event-id', 'bogus', '--retries', '0'], { cwd: scratch, env: { IMAP_DATA_ACCESS_URL: server.url } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('sdc watch: --last-event-id "bogus" is not an id this service handed out.');
    expect(result.stderr).toContain('"sdc watch: resume with --last-event-id <id>"');
    expect(result.stderr).not.toContain('Link');
    expect(result.stderr).not.toContain('resume with --last-event-id bogus');
  });
});
