import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalMultipart } from '../../src/store/local/local-multipart.js';
import { LocalObjectStore } from '../../src/store/local/local-object-store.js';
import { UrlSigner } from '../../src/store/local/url-signer.js';
import { TEMP_PREFIX } from '../../src/store/local/write-primitives.js';
import { NoSuchUploadError } from '../../src/store/index.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordFigures, scale } from '../reliability/figures.js';
import { rawExchange } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const GENERATED_CASES = scale(12, 100);
const MAX_OBJECT = 4000;

describe('uploads in parts belong to their opener and are bounded', () => {
  let server: TestServer;
  const keys: Record<'alpha' | 'beta', string> = { alpha: '', beta: '' };
  let run = 0;
  beforeAll(async () => {
    server = await startTestServer({ maxObjectSize: String(MAX_OBJECT) });
    keys.alpha = (await server.ctx.catalog.keys().create('alpha')).key;
    keys.beta = (await server.ctx.catalog.keys().create('beta')).key;
  });
  afterAll(() => server?.stop());

  const as = (who: 'alpha' | 'beta') => ({ 'X-API-Key': keys[who] });
  /** A fresh name per case, so cases never meet. */
  const freshPath = () => {
    const day = String(1 + (run % 28)).padStart(2, '0');
    const version = `v${String(Math.floor(run++ / 28)).padStart(2, '0')}-01`;
    return `imap/swe/l1a/2024/01/imap_swe_l1a_sci_202401${day}_202401${day}_${version}.cdf`;
  };
  const open = async (path: string) =>
    ((await (await fetch(`${server.url}/uploads/${path}`, { method: 'POST', headers: as('alpha') })).json()) as { uploadId: string }).uploadId;
  const partUrl = async (path: string, id: string, n: number) =>
    ((await (await fetch(`${server.url}/uploads/${path}?uploadId=${id}&parts=${n}`, { headers: as('alpha') })).json()) as { parts: { url: string }[] }).parts[0]!
      .url;
  const partFiles = async (id: string) => (await readdir(join(server.home, 'store', '.multipart', id))).filter((n) => /^\d{5}\./.test(n));
  /** Resolves once a part of the upload is being written (its temporary file exists). */
  const waitForTemporaryFile = (id: string) =>
    vi.waitFor(
      async () => {
        const names = await readdir(join(server.home, 'store', '.multipart', id));
        if (!names.some((n) => n.startsWith(TEMP_PREFIX))) throw new Error('no part of the upload began to be written');
      },
      { timeout: 10_000, interval: 20 },
    );

  it("another key can neither list, address, complete nor abort the opener's upload; the record names the opener", async () => {
    await fc.assert(
      fc.asyncProperty(fc.subarray(['list', 'address', 'complete', 'abort'] as const, { minLength: 1 }), async (tries) => {
        const path = freshPath();
        const id = await open(path);
        const url = await partUrl(path, id, 1);
        const etag = (await fetch(url, { method: 'PUT', body: 'alpha bytes' })).headers.get('etag')!;
        for (const attempt of tries) {
          const res =
            attempt === 'list' ? await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, { headers: as('beta') })
            : attempt === 'address' ? await fetch(`${server.url}/uploads/${path}?uploadId=${id}&parts=1-3`, { headers: as('beta') })
            : attempt === 'complete'
              ? await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, {
                  method: 'POST', headers: { ...as('beta'), 'Content-Type': 'application/json' }, body: JSON.stringify({ parts: [{ partNumber: 1, etag }] }),
                })
              : await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, { method: 'DELETE', headers: as('beta') });
          // Another's upload looks like no upload at all (abort stays idempotent: 204, nothing dropped).
          expect(res.status, attempt).toBe(attempt === 'abort' ? 204 : 404);
        }
        const done = await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, {
          method: 'POST', headers: { ...as('alpha'), 'Content-Type': 'application/json' }, body: JSON.stringify({ parts: [{ partNumber: 1, etag }] }),
        });
        expect(done.status).toBe(200);
        expect((await server.ctx.catalog.get(path))?.uploader).toBe('alpha');
      }),
      { numRuns: GENERATED_CASES },
    );
  }, 120_000);

  it('a part address replayed keeps one copy, the last; the parts together never pass SDC_MAX_OBJECT_SIZE', async () => {
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2500 })), { minLength: 1, maxLength: 10 }), async (puts) => {
        const path = freshPath();
        const id = await open(path);
        const urls = new Map<number, string>();
        const kept = new Map<number, number>();
        for (const [n, size] of puts) {
          if (!urls.has(n)) urls.set(n, await partUrl(path, id, n));
          const res = await fetch(urls.get(n)!, { method: 'PUT', body: Buffer.alloc(size, n) });
          const others = [...kept].filter(([m]) => m !== n).reduce((a, [, s]) => a + s, 0);
          if (others + size > MAX_OBJECT) {
            expect(res.status).toBe(413);
            refused++;
            // The earlier copy of a part stays when its replacement is refused.
          } else {
            expect(res.status).toBe(200);
            kept.set(n, size);
          }
          expect(await partFiles(id)).toHaveLength(kept.size);
          const listed = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, { headers: as('alpha') })).json()) as { uploaded: { partNumber: number; size: number }[] };
          expect(listed.uploaded.map((p) => [p.partNumber, p.size])).toEqual([...kept].sort((a, b) => a[0] - b[0]));
          expect(listed.uploaded.reduce((a, p) => a + p.size, 0)).toBeLessThanOrEqual(MAX_OBJECT);
        }
      }),
      { numRuns: GENERATED_CASES },
    );
    recordFigures('uploads-in-parts-bounds', { cases: GENERATED_CASES, puts_refused_over_limit: refused });
  }, 120_000);

  it('a newer send of a part supersedes one still under way: the earlier is answered 409, the last send is the part', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 8 }), async (concurrent) => {
        const path = freshPath();
        const id = await open(path);
        const url = await partUrl(path, id, 1);
        // The first PUT sends a little, then holds its body open.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const body = new ReadableStream({
          async start(controller) {
            controller.enqueue(new Uint8Array(10));
            await held;
            controller.enqueue(new Uint8Array(10));
            controller.close();
          },
        });
        const first = fetch(url, { method: 'PUT', body, duplex: 'half' } as RequestInit).then(
          (res) => res.status,
          () => 'closed',
        );
        await waitForTemporaryFile(id);
        const others = await Promise.all(Array.from({ length: concurrent - 1 }, (_, i) => fetch(url, { method: 'PUT', body: `send ${i}` })));
        release();
        // Superseded before its end: never stored, never a 5xx.
        expect([409, 'closed']).toContain(await first);
        for (const res of others) expect([200, 409]).toContain(res.status);
        const stored = others.filter((res) => res.status === 200).map((res) => res.headers.get('etag')!.replace(/"/g, ''));
        expect(stored.length).toBeGreaterThan(0);
        const listed = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, { headers: as('alpha') })).json()) as { uploaded: { etag: string }[] };
        expect(listed.uploaded).toHaveLength(1);
        expect(stored).toContain(listed.uploaded[0]!.etag);
        expect(await partFiles(id)).toHaveLength(1);
      }),
      { numRuns: GENERATED_CASES },
    );
  }, 120_000);

  it('a client resuming after a stalled connection (half a part sent, then nothing) is not kept waiting: its new send is stored at once', async () => {
    const path = freshPath();
    const id = await open(path);
    const url = new URL(await partUrl(path, id, 1));
    const part = Buffer.alloc(3000, 5);
    // Half the part on a raw socket, then the socket stays open and silent (a half-open connection).
    const head = [`PUT ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, `Content-Length: ${part.length}`, '', ''].join('\r\n');
    const stalled = rawExchange(server.url, Buffer.concat([Buffer.from(head), part.subarray(0, part.length / 2)]), { timeoutMs: 30_000 });
    await waitForTemporaryFile(id);

    const started = Date.now();
    const resumed = await fetch(url, { method: 'PUT', body: Buffer.alloc(3000, 6), signal: AbortSignal.timeout(20_000) });
    const resumedMs = Date.now() - started;
    expect(resumed.status).toBe(200);
    // The stalled send is answered (409) and its connection closed, its temporary file removed.
    const earlier = await stalled;
    expect(earlier.status).toBe(409);
    expect(earlier.headers['x-error-code']).toBe('SDC_UPLOAD_UNDER_WAY');
    expect(await partFiles(id)).toHaveLength(1);
    expect((await readdir(join(server.home, 'store', '.multipart', id))).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([]);
    const listed = (await (await fetch(`${server.url}/uploads/${path}?uploadId=${id}`, { headers: as('alpha') })).json()) as { uploaded: { etag: string; size: number }[] };
    expect(listed.uploaded).toEqual([{ partNumber: 1, etag: resumed.headers.get('etag')!.replace(/"/g, ''), size: 3000 }]);
    recordFigures('uploads-in-parts-resume', { resumed_status: resumed.status, resumed_ms: resumedMs, stalled_status: earlier.status });
  });

  it('an upload past its lifetime takes no part, lists nothing and completes nothing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'sdc-parts-'));
    try {
      const store = new LocalObjectStore(root, new UrlSigner(Buffer.alloc(32, 1)), () => 'http://127.0.0.1:1');
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 20, max: 80 }), async (lifetimeMs) => {
          // The lifetime is read off Date: the clock is moved past it rather than waited out.
          vi.useFakeTimers({ toFake: ['Date'] });
          try {
            const parts = new LocalMultipart(store, new UrlSigner(Buffer.alloc(32, 1)), () => 'http://127.0.0.1:1', lifetimeMs);
            const path = freshPath();
            const id = await parts.create(path, 'alpha');
            expect(await parts.writePart(path, id, 1, Readable.from([Buffer.from('early')]))).toMatch(/^[0-9a-f]{64}$/);
            vi.setSystemTime(Date.now() + lifetimeMs + 10);
            await expect(parts.writePart(path, id, 2, Readable.from([Buffer.from('late')]))).rejects.toBeInstanceOf(NoSuchUploadError);
            await expect(parts.listParts(path, id)).rejects.toBeInstanceOf(NoSuchUploadError);
            await expect(parts.checkOwner(path, id, 'alpha')).rejects.toBeInstanceOf(NoSuchUploadError);
          } finally {
            vi.useRealTimers();
          }
        }),
        { numRuns: 5 },
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
