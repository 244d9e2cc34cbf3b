import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

describe('a query parameter given twice is refused, never one of its values picked (docs/api.md, "HTTP conventions")', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes\n')).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('GET /upload/{path}?sha256=A&sha256=B is a 400, as POST /uploads is; so is a repeated withdrawn=include', async () => {
    const other = SAMPLE_PATH.replace('v00-01', 'v00-02');
    const upload = await fetch(`${server.url}/upload/${other}?sha256=${SHA_A}&sha256=${SHA_B}`);
    expect([upload.status, upload.headers.get('x-error-code')]).toEqual([400, 'SDC_REPEATED_PARAMETER']);
    expect(await upload.text()).toBe('sha256 was given more than once. Give each query parameter at most once.');
    const parts = await fetch(`${server.url}/uploads/${other}?sha256=${SHA_A}&sha256=${SHA_B}`, { method: 'POST' });
    expect(parts.status).toBe(400);
    const evidence = await fetch(`${server.url}/download/${SAMPLE_PATH}?withdrawn=include&withdrawn=include`, { redirect: 'manual' });
    expect([evidence.status, evidence.headers.get('x-error-code')]).toEqual([400, 'SDC_REPEATED_PARAMETER']);
  });

  it('every route of the app but those that read filters refuses ?p=1&p=2 with SDC_REPEATED_PARAMETER', async () => {
    const own = new Set(['/query', '/v0/query', '/coverage', '/events', '/changes']);
    const routes = server.app.accessTable().filter((r) => !own.has(r.url) && r.method !== 'OPTIONS' && r.access !== 'operator');
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const url = `${server.url}${route.url.replace('*', SAMPLE_PATH)}?p=1&p=2`;
      const res = await fetch(url, { method: route.method, redirect: 'manual' });
      expect([res.status, res.headers.get('x-error-code')], `${route.method} ${route.url}`).toEqual([400, 'SDC_REPEATED_PARAMETER']);
    }
  });
});
