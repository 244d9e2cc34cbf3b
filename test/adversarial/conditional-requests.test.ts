import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scale } from '../reliability/figures.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const CASES = scale(150, 2000);
const BYTES = 'conditional requests\n'; // 21 bytes
const SIZE = BYTES.length;

/** RFC 9110's rules, written from the RFC as a table of outcomes (the oracle of the generated cases). */
interface Sent {
  readonly method: 'GET' | 'HEAD';
  readonly ifMatch?: string;
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
  readonly ifUnmodifiedSince?: string;
  readonly ifRange?: string;
  readonly range?: string;
}

describe('the local store answers every conditional header as RFC 9110 says (docs/api.md, "Checked transfers")', () => {
  let server: TestServer;
  let address: string;
  let etag: string;
  let lastModified: string;
  beforeAll(async () => {
    server = await startTestServer();
    expect((await uploadFile(server.url, SAMPLE_PATH, BYTES)).status).toBe(200);
    address = (await fetch(`${server.url}/download/${SAMPLE_PATH}`, { redirect: 'manual' })).headers.get('location')!;
    const head = await fetch(address, { method: 'HEAD' });
    etag = head.headers.get('etag')!;
    lastModified = head.headers.get('last-modified')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const send = (sent: Sent) =>
    fetch(address, {
      method: sent.method,
      headers: Object.fromEntries(
        Object.entries({
          'If-Match': sent.ifMatch,
          'If-None-Match': sent.ifNoneMatch,
          'If-Modified-Since': sent.ifModifiedSince,
          'If-Unmodified-Since': sent.ifUnmodifiedSince,
          'If-Range': sent.ifRange,
          Range: sent.range,
        }).filter((pair): pair is [string, string] => pair[1] !== undefined),
      ),
    });

  it('a weak tag never matches If-Match, even beside another; a Range past the end is 416 with Content-Range; a failed If-Unmodified-Since is 412', async () => {
    const weak = await send({ method: 'GET', ifMatch: `"x", W/${etag}` });
    expect([weak.status, weak.headers.get('x-error-code')]).toEqual([412, 'SDC_PRECONDITION_FAILED']);
    const past = await send({ method: 'GET', range: `bytes=${SIZE}-` });
    expect([past.status, past.headers.get('x-error-code'), past.headers.get('content-range')]).toEqual([416, 'SDC_RANGE_NOT_SATISFIABLE', `bytes */${SIZE}`]);
    expect(await past.text()).toContain(`${SIZE} bytes`);
    const earlier = new Date(Date.parse(lastModified) - 86_400_000).toUTCString();
    const unmodified = await send({ method: 'GET', ifUnmodifiedSince: earlier });
    expect([unmodified.status, unmodified.headers.get('x-error-code')]).toEqual([412, 'SDC_PRECONDITION_FAILED']);
    expect(await unmodified.text()).toMatch(/If-Unmodified-Since/);
  });

  it('generated combinations of If-Match, If-None-Match, If-(Un)Modified-Since, If-Range and Range', async () => {
    const day = 86_400_000;
    const modified = Date.parse(lastModified);
    const date = fc.constantFrom(new Date(modified - day).toUTCString(), lastModified, new Date(modified + day).toUTCString(), 'not a date');
    const tag = fc.constantFrom(etag, `W/${etag}`, '"other"', 'W/"other"', '*', `"other", ${etag}`, `"other", W/${etag}`, 'garbage');
    const range = fc.constantFrom('bytes=0-4', `bytes=5-`, 'bytes=-6', `bytes=${SIZE}-`, `bytes=${SIZE + 10}-${SIZE + 20}`, 'bytes=-0', 'bytes=0-1,4-5', 'items=0-4', 'bytes=9-3');
    const sent = fc.record(
      {
        method: fc.constantFrom('GET' as const, 'HEAD' as const),
        ifMatch: tag,
        ifNoneMatch: tag,
        ifModifiedSince: date,
        ifUnmodifiedSince: date,
        ifRange: fc.oneof(tag, date),
        range,
      },
      { requiredKeys: ['method'] },
    );

    const expected = (s: Sent): { status: number; contentRange?: string; code?: string } => {
      const list = (v: string) => (v === '*' ? '*' : /^(\s*(W\/)?"[^"]*"\s*)(,(\s*(W\/)?"[^"]*"\s*))*$/.test(v) ? v.split(',').map((t) => t.trim()) : []);
      const at = (v: string | undefined) => (v !== undefined && v !== 'not a date' ? Date.parse(v) : undefined);
      // 13.1.1: If-Match compares strongly; else 13.1.4 If-Unmodified-Since.
      if (s.ifMatch !== undefined) {
        const tags = list(s.ifMatch);
        if (tags !== '*' && !tags.includes(etag)) return { status: 412, code: 'SDC_PRECONDITION_FAILED' };
      } else if (at(s.ifUnmodifiedSince) !== undefined && modified > at(s.ifUnmodifiedSince)!) return { status: 412, code: 'SDC_PRECONDITION_FAILED' };
      // 13.1.2: If-None-Match compares weakly; else 13.1.3 If-Modified-Since.
      if (s.ifNoneMatch !== undefined) {
        const tags = list(s.ifNoneMatch);
        if (tags === '*' || tags.some((t) => t.replace(/^W\//, '') === etag)) return { status: 304 };
      } else if (at(s.ifModifiedSince) !== undefined && modified <= at(s.ifModifiedSince)!) return { status: 304 };
      // 14.2: Range on GET only; 13.1.5: If-Range holds for the exact strong tag or the exact date.
      if (s.method !== 'GET' || s.range === undefined) return { status: 200 };
      if (s.ifRange !== undefined && s.ifRange !== etag && at(s.ifRange) !== modified) return { status: 200 };
      const outcomes: Record<string, { status: number; contentRange?: string; code?: string }> = {
        'bytes=0-4': { status: 206, contentRange: `bytes 0-4/${SIZE}` },
        'bytes=5-': { status: 206, contentRange: `bytes 5-${SIZE - 1}/${SIZE}` },
        'bytes=-6': { status: 206, contentRange: `bytes ${SIZE - 6}-${SIZE - 1}/${SIZE}` },
        [`bytes=${SIZE}-`]: { status: 416, contentRange: `bytes */${SIZE}`, code: 'SDC_RANGE_NOT_SATISFIABLE' },
        [`bytes=${SIZE + 10}-${SIZE + 20}`]: { status: 416, contentRange: `bytes */${SIZE}`, code: 'SDC_RANGE_NOT_SATISFIABLE' },
        'bytes=-0': { status: 416, contentRange: `bytes */${SIZE}`, code: 'SDC_RANGE_NOT_SATISFIABLE' },
      };
      // Several ranges, another unit, an invalid one: the whole file.
      return outcomes[s.range] ?? { status: 200 };
    };

    await fc.assert(
      fc.asyncProperty(sent, async (s) => {
        const res = await send(s);
        const body = Buffer.from(await res.arrayBuffer());
        const want = expected(s);
        const seen = { status: res.status, contentRange: res.headers.get('content-range') ?? undefined, code: res.headers.get('x-error-code') ?? undefined };
        expect(seen, JSON.stringify(s)).toEqual({ status: want.status, contentRange: want.contentRange, code: want.code });
        if (want.status === 200 && s.method === 'GET') expect(body.toString()).toBe(BYTES);
        if (want.status === 206) {
          const [, from, to] = /^bytes (\d+)-(\d+)\//.exec(want.contentRange!)!;
          expect(body.toString()).toBe(BYTES.slice(Number(from), Number(to) + 1));
        }
        if (want.status === 200 || want.status === 206 || want.status === 304) expect(res.headers.get('etag')).toBe(etag);
      }),
      { numRuns: CASES },
    );
  }, 120_000);
});
