import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { rawGet } from '../helpers/raw-http.js';
import { recordFigures, scale } from '../reliability/figures.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const GENERATED_URLS = scale(150, 1500);

/** Each character of `text` percent-encoded where `pick` says, as a client or a proxy may write it. */
const respelled = (text: string, pick: boolean[]) =>
  [...text].map((c, i) => (pick[i % pick.length] ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : c)).join('');

describe('secrets in URLs never reach the log', () => {
  let server: TestServer;
  let key: string;
  let log = '';
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        log += chunk.toString('utf8');
        done();
      },
    });
    server = await startTestServer({ maxObjectSize: String(64 * 1024 * 1024) }, {}, createLogger('info', sink));
    key = (await server.ctx.catalog.keys().create('alpha')).key;
  });
  afterAll(() => server?.stop());

  /**
   * Resolves once the access line of a later request is in the log: the lines of the requests
   * answered before it are written by then (each is written when its answer ends).
   */
  let marks = 0;
  const logCaughtUp = async () => {
    const marker = `/nowhere/log-mark-${++marks}`;
    await rawGet(server.url, marker);
    await vi.waitFor(() => expect(log).toContain(marker), { timeout: 10_000, interval: 10 });
  };

  /** The log, also with every percent-escape decoded: a secret must be in neither. */
  const logs = () => [log, log.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))];

  it('an API key as ?api_key=, ?key=, ?apikey= (any case, any spelling) or a path segment, on any route', async () => {
    const secret = key.slice('sdc_0123456789abcdef_'.length);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('api_key', 'key', 'apikey', 'API_KEY', 'Key', 'x-api-key', 'api-key', 'access_token'),
        fc.constantFrom('/query', '/download/', '/upload/', '/v0/query', '/metrics', '/nowhere/', '/events', '/coverage', '/'),
        fc.constantFrom('query', 'segment', 'both'),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        async (name, route, where, pick) => {
          const written = respelled(key, pick);
          const path = where === 'query' ? route : `${route.replace(/\/$/, '')}/${written}`;
          const query = where === 'segment' ? '' : `?${respelled(name, pick)}=${written}`;
          const answer = await rawGet(server.url, `${path}${query}`);
          expect(answer.status).toBeLessThan(500);
        },
      ),
      { numRuns: GENERATED_URLS },
    );
    await logCaughtUp();
    for (const text of logs()) expect(text).not.toContain(secret);
    expect(log).toContain('[redacted]');
    recordFigures('secrets-in-urls', { urls_tried: GENERATED_URLS, log_bytes: log.length });
  }, 120_000);

  it("an upload in parts' id, in every address that carries it", async () => {
    const opened = (await (await fetch(`${server.url}/uploads/${SAMPLE_PATH}`, { method: 'POST', headers: { 'X-API-Key': key } })).json()) as { uploadId: string };
    const id = opened.uploadId;
    const listed = (await (await fetch(`${server.url}/uploads/${SAMPLE_PATH}?uploadId=${id}&parts=1`, { headers: { 'X-API-Key': key } })).json()) as {
      parts: { url: string }[];
    };
    expect((await fetch(listed.parts[0]!.url, { method: 'PUT', body: 'part one' })).status).toBe(200);
    await fetch(`${server.url}/uploads/${SAMPLE_PATH}?UploadID=${id}`, { method: 'DELETE', headers: { 'X-API-Key': key } });
    await logCaughtUp();
    for (const text of logs()) expect(text).not.toContain(id);
  });
});
