import { describe, expect, it } from 'vitest';
import { loggerInto } from '../helpers/log-lines.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile } from '../helpers/test-server.js';

const KEYED_PATH = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';

describe('request logs', () => {
  it('are JSON lines with a request id, and never print a signature, an API key or a secret', async () => {
    const lines: string[] = [];
    const server = await startTestServer({ signingSecret: 'log-test-signing-secret' }, {}, loggerInto(lines));
    let key = '';
    try {
      expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes')).status).toBe(200);
      const location = (await fetch(`${server.url}/download/${SAMPLE_NAME}`, { redirect: 'manual' })).headers.get('location')!;
      expect(await (await fetch(location)).text()).toBe('bytes');
      // With API keys: sent both ways, right and wrong.
      key = (await server.ctx.catalog.keys().create('logged-team')).key;
      const address = (await (await fetch(`${server.url}/upload/${KEYED_PATH}`, { headers: { 'X-API-Key': key } })).json()) as string;
      expect((await fetch(address, { method: 'PUT', body: 'keyed', headers: { 'Content-Type': '' } })).status).toBe(200);
      expect((await fetch(`${server.url}/upload/${KEYED_PATH}`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(409);
      expect((await fetch(`${server.url}/upload/${KEYED_PATH}`, { headers: { 'X-API-Key': `${key}x` } })).status).toBe(403);
    } finally {
      await server.stop();
    }
    const all = lines.join('\n');
    // No key, no part of its secret, no signing secret; the key's name is what logs show.
    expect(all).not.toContain(key.slice(22));
    expect(all).not.toContain('log-test-signing-secret');
    expect(all).not.toMatch(/sdc_[0-9a-f]{16}_/);
    expect(all).not.toMatch(/bearer/i);
    expect(lines.some((l) => l.includes('"api_key":"logged-team"'))).toBe(true);
    expect(lines.some((l) => l.includes('"uploader":"logged-team"') && l.includes('indexed'))).toBe(true);
    const entries = lines.map((l) => JSON.parse(l) as { reqId?: string; req?: { url: string } });
    const storeRequests = entries.filter((e) => e.req?.url.startsWith('/store/'));
    expect(storeRequests.length).toBeGreaterThanOrEqual(2); // the PUT and the GET
    expect(storeRequests.every((e) => e.reqId && e.req!.url.includes('signature=[redacted]'))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/signature=[0-9a-f]/);
  });
});
