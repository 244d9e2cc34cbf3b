import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** A stored path of its own per call, so the tests' uploads never meet. */
let day = 0;
function nextPath(): string {
  const d = new Date(Date.UTC(2024, 2, 1 + day++)).toISOString().slice(0, 10).replace(/-/g, '');
  return `imap/swe/l1a/${d.slice(0, 4)}/${d.slice(4, 6)}/imap_swe_l1a_sci_${d}_${d}_v00-01.cdf`;
}

async function uploadAddress(server: TestServer, path: string, key?: string): Promise<string> {
  const res = await fetch(`${server.url}/upload/${path}`, { headers: key ? { 'x-api-key': key } : {} });
  if (res.status !== 200) throw new Error(`upload address: ${res.status} ${await res.text()}`);
  return (await res.json()) as string;
}

/** The address's host and port changed to `server`'s (a restarted server listens on another port). */
function at(server: TestServer, address: string): string {
  const url = new URL(address);
  return `${server.url}${url.pathname}${url.search}`;
}

const put = (address: string) => fetch(address, { method: 'PUT', body: 'bytes', headers: { 'content-type': '' } });

// Rotation without an outage (docs/deploy.md, Rotation): each secret has an overlap in which
// the old and the new one both work.
describe('rotating secrets without an outage', { timeout: 180_000 }, () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-rotation-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('SDC_SIGNING_SECRET_PREVIOUS: addresses signed with the old secret still work; without it they are refused', async () => {
    const old = await startTestServer({ home, signingSecret: 'the-old-secret' });
    const pathA = nextPath();
    const pathB = nextPath();
    const [a, b] = [await uploadAddress(old, pathA), await uploadAddress(old, pathB)];
    await old.close();

    const rotated = await startTestServer({ home, signingSecret: 'the-new-secret', signingSecretPrevious: 'the-old-secret' });
    try {
      expect((await put(at(rotated, a))).status).toBe(200);
      const fresh = await uploadAddress(rotated, nextPath());
      expect((await put(fresh)).status).toBe(200);
    } finally {
      await rotated.close();
    }

    const after = await startTestServer({ home, signingSecret: 'the-new-secret' });
    try {
      const refused = await put(at(after, b));
      expect(refused.status).toBe(403);
    } finally {
      await after.close();
    }
  });

  it('SDC_SIGNING_SECRET_PREVIOUS=generated:<hex> retires a secret that was generated into SDC_HOME', async () => {
    const own = await mkdtemp(join(tmpdir(), 'sdc-rotation-generated-'));
    try {
      const first = await startTestServer({ home: own });
      const address = await uploadAddress(first, nextPath());
      await first.close();
      const generated = (await readFile(join(own, 'signing-secret'), 'utf8')).trim();
      const rotated = await startTestServer({ home: own, signingSecret: 'now-configured', signingSecretPrevious: `generated:${generated}` });
      try {
        expect((await put(at(rotated, address))).status).toBe(200);
      } finally {
        await rotated.close();
      }
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('SDC_EVENTS_TOKEN_PREVIOUS: POST /events/s3 takes either token during the switch, in the header or the URL', async () => {
    const server = await startTestServer({ home, eventsToken: 'token-new', eventsTokenPrevious: 'token-old' });
    const body = JSON.stringify({ Event: 's3:TestEvent' });
    const post = (auth: { header?: string; query?: string }) =>
      fetch(`${server.url}/events/s3${auth.query ? `?token=${auth.query}` : ''}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth.header ? { authorization: `Bearer ${auth.header}` } : {}) },
        body,
      });
    try {
      expect((await post({ header: 'token-new' })).status).toBe(200);
      expect((await post({ header: 'token-old' })).status).toBe(200);
      expect((await post({ query: 'token-old' })).status).toBe(200);
      expect((await post({ header: 'token-older' })).status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('sdc keys rotate: a new key under the same name; both upload during the overlap, records keep the name', async () => {
    const keysHome = await mkdtemp(join(tmpdir(), 'sdc-rotation-keys-'));
    try {
      const cli = (args: string[]) => runCli([...args, '--home', keysHome]);
      const oldKey = (await cli(['keys', 'create', 'swe-pipeline', '--create'])).stdout.trim();
      const server = await startTestServer({ home: keysHome });
      try {
        const rotated = await cli(['keys', 'rotate', 'swe-pipeline', '--overlap', '1h']);
        expect(rotated.code, rotated.stderr).toBe(0);
        const newKey = rotated.stdout.trim();
        expect(newKey).toMatch(/^sdc_[0-9a-f]{16}_/);
        expect(rotated.stderr).toMatch(/The old key works until \d{4}-\d\d-\d\dT/);
        const listed = await cli(['keys', 'list']);
        expect(listed.stdout.match(/swe-pipeline/g)).toHaveLength(2);
        expect(listed.stdout).toContain('(overlap)');

        for (const key of [oldKey, newKey]) {
          const path = nextPath();
          expect((await put(await uploadAddress(server, path, key))).status).toBe(200);
          const [record] = (await (await fetch(`${server.url}/query?file_path=${path}`)).json()) as { uploader?: string }[];
          expect(record?.uploader).toBe('swe-pipeline');
        }

        // The overlap ends now (rotate with 0 s): the earlier keys are refused, the newest works.
        const last = (await cli(['keys', 'rotate', 'swe-pipeline', '--overlap', '0'])).stdout.trim();
        expect((await fetch(`${server.url}/upload/${nextPath()}`, { headers: { 'x-api-key': newKey } })).status).toBe(403);
        expect((await fetch(`${server.url}/upload/${nextPath()}`, { headers: { 'x-api-key': oldKey } })).status).toBe(403);
        expect((await fetch(`${server.url}/upload/${nextPath()}`, { headers: { 'x-api-key': last } })).status).toBe(200);

        const bad = await cli(['keys', 'rotate', 'swe-pipeline', '--overlap', 'soon']);
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('--overlap expects a duration such as 3600, 90m, 24h or 7d');
        const unknown = await cli(['keys', 'rotate', 'nobody']);
        expect(unknown.code).toBe(2);
        expect(unknown.stderr).toContain('no key named "nobody"');
      } finally {
        await server.close();
      }
    } finally {
      await rm(keysHome, { recursive: true, force: true });
    }
  });
});
