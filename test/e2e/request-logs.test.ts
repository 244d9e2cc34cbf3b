import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile } from '../helpers/test-server.js';

describe('request logs', () => {
  it('are JSON lines with a request id, and never print a signature', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const server = await startTestServer({}, {}, createLogger('info', sink));
    try {
      expect((await uploadFile(server.url, SAMPLE_PATH, 'bytes')).status).toBe(200);
      const location = (await fetch(`${server.url}/download/${SAMPLE_NAME}`, { redirect: 'manual' })).headers.get('location')!;
      expect(await (await fetch(location)).text()).toBe('bytes');
    } finally {
      await server.stop();
    }
    const entries = lines.map((l) => JSON.parse(l) as { reqId?: string; req?: { url: string } });
    const storeRequests = entries.filter((e) => e.req?.url.startsWith('/store/'));
    expect(storeRequests.length).toBeGreaterThanOrEqual(2); // the PUT and the GET
    expect(storeRequests.every((e) => e.reqId && e.req!.url.includes('signature=[redacted]'))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/signature=[0-9a-f]/);
  });
});
