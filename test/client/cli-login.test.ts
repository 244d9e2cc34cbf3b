import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { completeProviderPages } from '../helpers/oidc-sign-in.js';
import { runCli, startCli } from '../helpers/run-cli.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('sdc login, whoami, logout against a real OpenID provider', () => {
  let provider: TestProvider;
  let server: TestServer;
  let home: string;
  let env: Record<string, string>;
  const signInFile = () => join(home, 'config', 'sdc', 'sign-in.json');

  beforeAll(async () => {
    provider = await startTestProvider();
    server = await startTestServer({}, provider.env);
    home = await mkdtemp(join(tmpdir(), 'sdc-login-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), IMAP_DATA_ACCESS_URL: server.url };
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it('signs in with the device grant (the test approves it on the provider\'s pages), keeps the tokens 0600, and uploads as the user', { timeout: 180_000 }, async () => {
    const login = startCli(['login'], { env });
    const line = await login.waitFor('stderr', (l) => /^\(or open (\S+)\)$/.test(l));
    expect(login.stderrLines.join('\n')).toMatch(/To sign in, open http:\/\/127\.0\.0\.1:\d+\/device and enter the code \S+/);
    await completeProviderPages(provider, /^\(or open (\S+)\)$/.exec(line)![1]!, 'ursula');
    expect(await login.exit).toBe(0);
    expect(login.stderrLines.join('\n')).toMatch(/Signed in: oidc:ursula \(uploader, until \d{4}-/);
    expect((await stat(signInFile())).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'config', 'sdc'))).mode & 0o777).toBe(0o700);

    const whoami = await runCli(['whoami'], { env });
    expect(whoami.stdout).toMatch(/^oidc:ursula \(uploader, until /);

    const dataDir = join(home, 'data');
    await mkdir(join(dataDir, SAMPLE_PATH, '..'), { recursive: true });
    await writeFile(join(dataDir, SAMPLE_PATH), 'bytes of the instrument');
    const upload = await runCli(['upload', SAMPLE_PATH, '--data-dir', dataDir], { env, cwd: dataDir });
    expect(upload.code, upload.stderr).toBe(0);
    const [record] = (await (await fetch(`${server.url}/query?instrument=swe`)).json()) as Record<string, unknown>[];
    expect(record!.uploader).toBe('oidc:ursula');
  });

  it('renews an access token about to end with the refresh token, and keeps the new one', { timeout: 120_000 }, async () => {
    const kept = JSON.parse(await readFile(signInFile(), 'utf8')) as Record<string, Record<string, unknown>>;
    kept[server.url] = { ...kept[server.url], accessToken: 'eyJ.stale.token', expiresAt: Math.floor(Date.now() / 1000) + 10 };
    await writeFile(signInFile(), JSON.stringify(kept), { mode: 0o600 });
    const whoami = await runCli(['whoami'], { env });
    expect(whoami.stdout, whoami.stderr).toMatch(/^oidc:ursula \(uploader, until /);
    const renewed = (JSON.parse(await readFile(signInFile(), 'utf8')) as Record<string, Record<string, unknown>>)[server.url]!;
    expect(renewed.accessToken).not.toBe('eyJ.stale.token');
    expect(renewed.expiresAt as number).toBeGreaterThan(Date.now() / 1000 + 60);
  });

  it('lets an API key win, and forgets the sign-in on logout', { timeout: 180_000 }, async () => {
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    expect((await runCli(['whoami'], { env: { ...env, IMAP_API_KEY: key } })).stdout).toBe('swe-pipeline (uploader, API key)\n');
    expect((await runCli(['whoami', '--api-key', key], { env })).stdout).toBe('swe-pipeline (uploader, API key)\n');
    expect((await runCli(['logout'], { env })).stderr).toMatch(/Signed out of/);
    expect((await runCli(['whoami'], { env })).stdout).toMatch(/^not signed in/);
  });
});
