import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../helpers/raw-http.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const GENERATED_HOSTS = scale(150, 1500);
const PUBLIC_URL = 'https://data.example.org/sdc';

/** Host values a client may send: ports out of range, addresses, spaces, brackets, percent signs, other names. */
const hostValues = fc.oneof(
  fc.constantFrom('x:99999', '::1', 'a b', '[zz]', '%', 'evil.example', 'evil.example:443', '[::1]:8080', '', 'a@b', 'a/b', '..', 'a?b#c'),
  fc.stringMatching(/^[\x21-\x7e ]{0,40}$/).filter((s) => s.trim() === s),
  fc.tuple(fc.domain(), fc.integer({ min: 0, max: 200_000 })).map(([d, p]) => `${d}:${p}`),
);

/** GET `target` with exactly this Host header (fetch cannot send an arbitrary one). */
function getWithHost(base: string, target: string, host: string) {
  return rawExchange(base, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
}

async function storeTwo(server: TestServer): Promise<void> {
  for (const version of ['v00-01', 'v00-02']) {
    const path = SAMPLE_PATH.replace('v00-01', version);
    const address = new URL((await (await fetch(`${server.url}/upload/${path}`)).json()) as string);
    // The address is under the public URL when one is set; the bytes go to this server.
    const put = await fetch(`${server.url}${address.pathname.replace(/^\/sdc/, '')}${address.search}`, { method: 'PUT', body: version, headers: { 'Content-Type': '' } });
    expect(put.status).toBe(200);
  }
}

describe('links the server writes never come from the Host header', () => {
  const servers: { relative?: TestServer; public?: TestServer } = {};

  beforeAll(async () => {
    servers.relative = await startTestServer();
    servers.public = await startTestServer({ publicUrl: PUBLIC_URL });
    await storeTwo(servers.relative);
    await storeTwo(servers.public);
  });
  afterAll(async () => {
    await servers.relative?.stop();
    await servers.public?.stop();
  });

  for (const [which, expected] of [
    ['relative', /^<\/(v0\/)?query\?[^>]*cursor=[^>]+>; rel="next"$/],
    ['public', /^<https:\/\/data\.example\.org\/sdc\/(v0\/)?query\?[^>]*cursor=[^>]+>; rel="next"$/],
  ] as const) {
    it(`any Host: never a 500, and the next page's Link is ${which === 'public' ? 'under SDC_PUBLIC_URL' : 'relative'}`, async () => {
      const server = servers[which]!;
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(hostValues, fc.constantFrom('/query?limit=1', '/v0/query?limit=1', '/query?limit=1&sort=file_path'), async (host, target) => {
          const answer = await getWithHost(server.url, target, host);
          // Node's parser may refuse a Host outright (400); the app must never fail on it.
          expect(answer.status, `Host: ${JSON.stringify(host)}`).toBeLessThan(500);
          if (answer.status !== 200) return;
          answered++;
          expect(answer.headers.link, `Host: ${JSON.stringify(host)}`).toMatch(expected);
        }),
        { numRuns: GENERATED_HOSTS },
      );
      expect(answered).toBeGreaterThan(GENERATED_HOSTS / 2);
      recordFigures(`host-header-links-${which}`, { hosts_tried: GENERATED_HOSTS, answered_200: answered });
    }, 120_000);
  }

  it('an absolute-form or //host request line names no host in the link either', async () => {
    const server = servers.relative!;
    for (const target of ['http://evil.example/query?limit=1', '//evil.example/query?limit=1']) {
      const answer = await getWithHost(server.url, target, 'evil.example');
      if (answer.status !== 200) continue;
      expect(answer.headers.link).not.toContain('evil.example');
      expect(answer.headers.link).toMatch(/^<\/query\?/);
    }
  });
});
