import { request as httpRequest } from 'node:http';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadFile } from '../helpers/test-server.js';

/** A started server the suite can talk to, whatever its backends. */
export interface SuiteServer {
  readonly url: string;
  /** Resolves once the store's notifications of completed PUTs are indexed (stores whose PUTs bypass the server). */
  settle?(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The core issue's end-to-end flow over HTTP, written once and run against each
 * combination of backends (embedded default here; S3 + PostgreSQL where available).
 */
export interface CoreFlowOptions {
  /**
   * The store itself refuses a second PUT to a used upload address (local store: 409).
   * False: it takes the bytes under a staging key (S3), and the promotion refuses them.
   */
  readonly storeRefusesReplayedPut?: boolean;
}

export function describeCoreFlow(label: string, start: () => Promise<SuiteServer>, options: CoreFlowOptions = {}): void {
  const { storeRefusesReplayedPut = true } = options;
  describe(`core flow over HTTP: ${label}`, () => {
    let server: SuiteServer;
    let base: string;
    // Names unique to this run, so suites sharing a backend do not collide.
    const tag = `r${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.replace(/[^a-z0-9]/g, '');
    const name = (descriptor: string, version = 'v00-01') => `imap_swe_l1a_${tag}${descriptor}_20240105_20240105_${version}.cdf`;
    const pathOf = (n: string) => `imap/swe/l1a/2024/01/${n}`;

    beforeAll(async () => {
      server = await start();
      base = server.url;
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('works for a client that behaves like the mission\'s Python client', async () => {
      const n = name('py');
      const bytes = Buffer.from(`science bytes of ${n}\n`.repeat(1000));

      // 1. Upload address: the body parses as JSON (a string).
      const up = await fetch(`${base}/upload/${pathOf(n)}`);
      expect(up.status).toBe(200);
      expect(up.headers.get('content-type')).toMatch(/^application\/json/);
      const address = (await up.json()) as string;
      expect(typeof address).toBe('string');

      // 2. PUT with an empty Content-Type header, exactly as requests does with data=... and headers={'Content-Type': ''}.
      const putStatus = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(address, { method: 'PUT', headers: { 'Content-Type': '', 'Content-Length': bytes.length } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(bytes);
      });
      expect(putStatus).toBe(200);
      await server.settle?.();

      // 3. Query: the body parses as a JSON array of records.
      const q = await fetch(`${base}/query?instrument=swe&descriptor=${tag}py&start_date=20240105&end_date=20240105`);
      expect(q.status).toBe(200);
      expect(q.headers.get('content-type')).toMatch(/^application\/json/);
      expect(q.headers.get('access-control-allow-origin')).toBe('*');
      const records = (await q.json()) as Record<string, unknown>[];
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({
        file_path: pathOf(n),
        instrument: 'swe',
        data_level: 'l1a',
        descriptor: `${tag}py`,
        start_date: '20240105',
        end_date: '20240105',
        version: 'v00-01',
        extension: 'cdf',
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });

      // 4. Download: a 302 an ordinary HTTP library follows, to the identical bytes.
      const redirect = await fetch(`${base}/download/${pathOf(n)}`, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      const location = redirect.headers.get('location');
      expect(location).toMatch(/^https?:\/\//);
      expect(await redirect.json()).toEqual({ download_url: location });
      const followed = await fetch(`${base}/download/${n}`);
      expect(followed.status).toBe(200);
      expect(Buffer.from(await followed.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it('refuses a second upload of a stored name, and a replayed PUT address, with 409', async () => {
      const n = name('dup');
      const up = await fetch(`${base}/upload/${pathOf(n)}`);
      const address = (await up.json()) as string;
      expect((await fetch(address, { method: 'PUT', body: 'first', headers: { 'Content-Type': '' } })).status).toBe(200);

      const again = await fetch(`${base}/upload/${pathOf(n)}`);
      expect(again.status).toBe(409);
      expect(await again.text()).toBe(`${pathOf(n)} already exists.`);

      const replay = await fetch(address, { method: 'PUT', body: 'second', headers: { 'Content-Type': '' } });
      expect(replay.status).toBe(storeRefusesReplayedPut ? 409 : 200);
      await server.settle?.();
      const got = await fetch(`${base}/download/${pathOf(n)}`);
      expect(await got.text()).toBe('first');
    });

    it('serves byte ranges with 206', async () => {
      const n = name('range');
      expect((await uploadFile(base, pathOf(n), '0123456789')).status).toBe(200);
      const location = (await fetch(`${base}/download/${n}`, { redirect: 'manual' })).headers.get('location')!;
      const part = await fetch(location, { headers: { Range: 'bytes=2-5' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
      expect(await part.text()).toBe('2345');
      const whole = await fetch(location);
      expect(whole.headers.get('content-length')).toBe('10');
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
    });

    it('answers 404 with the hint for an absent file and 400 for a path without a file name', async () => {
      const missing = await fetch(`${base}/download/${pathOf(name('absent'))}`);
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain('Please include the full path to the file');
      const noFile = await fetch(`${base}/download/imap/swe/l1a/`);
      expect(noFile.status).toBe(400);
      expect(await noFile.text()).toContain('/download/path/to/file/filename.pkts');
    });

    it('tells a client that sends the name as a query parameter where the path goes', async () => {
      const answer = await fetch(`${base}/upload?file_name=${name('query-form')}`);
      expect(answer.status).toBe(400);
      const text = await answer.text();
      expect(text).toMatch(/^Invalid filename\. Expected <mission>_/);
      expect(text).toContain("The file's path goes in the URL path: /upload/imap/");
    });
  });
}
