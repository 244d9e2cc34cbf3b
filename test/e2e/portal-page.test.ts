import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalPlugin } from '../../src/http/portal-plugin.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { ensurePortal } from '../helpers/lazy-build.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// The portal's assets as the sources are now (web/build.js runs only when web/ or src/ changed).
await ensurePortal();

/** The mission the page was given, read back from its data block. */
function pageMission(html: string): unknown {
  const m = /<script id="mission-config" type="application\/json">(.*?)<\/script>/s.exec(html);
  return m && JSON.parse(m[1]!);
}

describe('the portal page and its assets', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdc-mission-'));
    const mission = { name: 'demo', instruments: ['cam', 'spec'], dataLevels: ['raw', 'l1'], extensionByLevel: { raw: 'bin' } };
    await writeFile(join(dir, 'demo.json'), JSON.stringify(mission));
    server = await startTestServer({ missionConfig: join(dir, 'demo.json') });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the page at / with the running mission written in, and safe headers', async () => {
    for (const address of ['/', '/?instrument=cam&page=1']) {
      const res = await fetch(`${server.url}${address}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(pageMission(html)).toEqual({ name: 'demo', instruments: ['cam', 'spec'], dataLevels: ['raw', 'l1'], extensionByLevel: { raw: 'bin' }, defaultExtension: 'cdf', access: { default: 'public', embargoedMetadata: 'hidden', rules: [] } });
      expect(html).toContain('<script type="module" src="/assets/portal.js">');
    }
  });

  it('serves the same page at the sign-in callback, sending no Referer (the code is in its address)', async () => {
    const res = await fetch(`${server.url}/auth/callback?code=abc&state=xyz&iss=${encodeURIComponent('https://idp.example.org')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(pageMission(await res.text())).toMatchObject({ name: 'demo' });
    // Only the page: nothing below it.
    expect((await fetch(`${server.url}/auth/callback/extra`)).status).toBe(404);
  });

  it('serves the built assets with their types, and the API beside them', async () => {
    const js = await fetch(`${server.url}/assets/portal.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(application|text)\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${server.url}/assets/portal.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${server.url}/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/assets/../package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/query`)).status).toBe(200);
    expect((await fetch(`${server.url}/coverage`)).status).toBe(200);
  });

  it('escapes the mission so no value can end the script element', async () => {
    const app = Fastify();
    await app.register(portalPlugin({ ...IMAP_MISSION, name: 'x</script><script>alert(1)</script>' }));
    const html = (await app.inject('/')).body;
    expect(html).not.toContain('</script><script>alert(1)');
    expect((pageMission(html) as { name: string }).name).toBe('x</script><script>alert(1)</script>');
    await app.close();
  });

  it('says how to build the portal when its assets are missing', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'sdc-noportal-'));
    const app = Fastify();
    await app.register(portalPlugin(IMAP_MISSION, `${empty}/`));
    const res = await app.inject('/');
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    await app.close();
    await rm(empty, { recursive: true, force: true });
  });
});
