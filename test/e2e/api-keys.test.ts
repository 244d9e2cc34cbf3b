import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SDC_BIN } from '../helpers/child-server.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const run = promisify(execFile);
const OTHER_PATH = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';

async function putWith(server: TestServer, path: string, headers: Record<string, string>, bytes = 'data'): Promise<number> {
  const res = await fetch(`${server.url}/upload/${path}`, { headers });
  if (res.status !== 200) return res.status;
  const address = (await res.json()) as string;
  return (await fetch(address, { method: 'PUT', body: bytes, headers: { 'Content-Type': '' } })).status;
}

describe('API keys', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.stop();
  });

  it('leave uploads open while no key exists, and close them once one does', async () => {
    server = await startTestServer();
    expect(await putWith(server, SAMPLE_PATH, {})).toBe(200);
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    const refused = await fetch(`${server.url}/upload/${OTHER_PATH}`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expect(await refused.text()).toMatch(/API key is required to upload.*X-API-Key.*IMAP_API_KEY/);
    expect(await putWith(server, OTHER_PATH, { 'X-API-Key': key })).toBe(200);
    // A browser's CORS preflight carries no key, and is answered.
    const preflight = await fetch(`${server.url}/upload/${OTHER_PATH}`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://portal.test', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    expect(preflight.status).toBe(204);
    // Query and download stay public.
    expect((await fetch(`${server.url}/query`)).status).toBe(200);
    expect((await fetch(`${server.url}/download/${SAMPLE_PATH}`, { redirect: 'manual' })).status).toBe(302);
  });

  it('give a reader key reads but no upload (403 SDC_API_KEY_READ_ONLY) and no correction (403, saying it is a reader key)', async () => {
    server = await startTestServer();
    const { key } = await server.ctx.catalog.keys().create('science-team', 'reader');
    const refused = await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-error-code')).toBe('SDC_API_KEY_READ_ONLY');
    expect(await refused.text()).toMatch(/"science-team" is a reader key: it reads every file but uploads none/);
    const multipart = await fetch(`${server.url}/uploads/${SAMPLE_PATH}`, { method: 'POST', headers: { 'X-API-Key': key } });
    expect(multipart.status).toBe(403);
    const correction = await fetch(`${server.url}/withdraw/${SAMPLE_PATH}`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: '{"reason": "x"}' });
    expect(correction.status).toBe(403);
    expect(await correction.text()).toMatch(/is a reader key: this call needs a curator key/);
    expect((await fetch(`${server.url}/query`, { headers: { 'X-API-Key': key } })).status).toBe(200);
  });

  it('accept X-API-Key and Authorization: Bearer; refuse wrong (403) and revoked (403) keys, saying which', async () => {
    server = await startTestServer();
    const keys = server.ctx.catalog.keys();
    const { key } = await keys.create('mag-team');
    const url = `${server.url}/upload/${SAMPLE_PATH}`;
    expect((await fetch(url, { headers: { 'X-API-Key': key } })).status).toBe(200);
    expect((await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);

    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const wrong of [tampered, 'not-a-key', `sdc_0000000000000000_${'x'.repeat(43)}`]) {
      const res = await fetch(url, { headers: { 'X-API-Key': wrong } });
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(/not valid/);
    }
    expect(await keys.revoke('mag-team')).toBe('revoked');
    const revoked = await fetch(url, { headers: { 'X-API-Key': key } });
    expect(revoked.status).toBe(403);
    expect(await revoked.text()).toMatch(/"mag-team" was revoked on \d{4}-/);
    // Revoking the last key does not open uploads again.
    expect((await fetch(url)).status).toBe(401);
  });

  it('keep the uploader (the key name) in the record, bound into the signed PUT address', async () => {
    server = await startTestServer();
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    const address = (await (await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).json()) as string;
    expect(address).toContain('uploader=swe-pipeline');
    // Changing the uploader in the address breaks its signature.
    const forged = await fetch(address.replace('uploader=swe-pipeline', 'uploader=someone-else'), { method: 'PUT', body: 'x' });
    expect(forged.status).toBe(403);
    expect((await fetch(address, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } })).status).toBe(200);
    const [record] = (await (await fetch(`${server.url}/query?file_path=${SAMPLE_PATH}`)).json()) as { uploader?: string }[];
    expect(record!.uploader).toBe('swe-pipeline');
  });

  it('SDC_REQUIRE_KEYS closes uploads before any key exists; SDC_READ_NEEDS_KEY closes query, download and the feed', async () => {
    server = await startTestServer({ requireKeys: 'true', readNeedsKey: 'true' });
    expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`)).status).toBe(401);
    const query = await fetch(`${server.url}/query`);
    expect(query.status).toBe(401);
    expect(await query.text()).toMatch(/required to query or download/);
    expect((await fetch(`${server.url}/download/${SAMPLE_PATH}`)).status).toBe(401);
    expect((await fetch(`${server.url}/events`)).status).toBe(401);
    const { key } = await server.ctx.catalog.keys().create('reader');
    expect((await fetch(`${server.url}/query`, { headers: { 'X-API-Key': key } })).status).toBe(200);
    expect((await fetch(`${server.url}/download/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).status).toBe(404);
  });
});

describe('sdc keys create|list|revoke', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-keys-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });
  const sdc = (...args: string[]) => run(process.execPath, [SDC_BIN, 'keys', ...args, '--home', home], { env: { PATH: process.env.PATH } });

  it('creates a key printed once, lists names without keys, revokes by name; a running server sees it', async () => {
    const created = await sdc('create', 'swe-pipeline', '--create');
    const key = created.stdout.trim();
    expect(key).toMatch(/^sdc_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toMatch(/only time it is shown/);

    await expect(sdc('create', 'swe-pipeline')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/already exists/) });
    await expect(sdc('create', 'bad name!')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/Invalid key name/) });

    await expect(sdc('create', 'ops', '--role', 'admin')).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--role expects one of uploader, curator/) });
    const curator = (await sdc('create', 'archive-curator', '--role', 'curator')).stdout.trim();
    expect((await sdc('rotate', 'archive-curator', '--overlap', '0')).stderr).toMatch(/New curator key/);

    const listed = (await sdc('list')).stdout;
    expect(listed).toMatch(
      /^NAME\s+ROLE\s+KEY ID\s+CREATED\s+REVOKED\narchive-curator\s+curator\s+[0-9a-f]{16}\s+\S+\s+\S+\narchive-curator\s+curator\s+[0-9a-f]{16}\s+\S+\s+-\nswe-pipeline\s+uploader\s+[0-9a-f]{16}\s+\S+\s+-\n$/,
    );
    expect(listed).not.toContain('ops');
    expect(listed).not.toContain(key.slice(22));
    expect((await sdc('create', 'science-team', '--role', 'reader')).stderr).toMatch(/Created reader key "science-team"/);

    const server = await startTestServer({ home });
    try {
      expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).status).toBe(200);
      expect((await sdc('revoke', 'swe-pipeline')).stderr).toMatch(/Revoked/);
      expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': key } })).status).toBe(403);
    } finally {
      await server.close();
    }
    const after = (await sdc('list')).stdout;
    expect(after).toMatch(/science-team\s+reader\s/);
    expect(after).toMatch(/swe-pipeline\s+uploader\s+[0-9a-f]{16}\s+\S+\s+\d{4}-\d\d-\d\dT/);
    expect(curator).not.toBe(key);
    await expect(sdc('revoke', 'nobody')).rejects.toMatchObject({ code: 2 });
  }, 90_000);
});
