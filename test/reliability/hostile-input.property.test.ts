import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAP_MISSION, resolveRequestPath } from '../../src/mission/index.js';
import { UrlSigner } from '../../src/store/index.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordFigures, scale } from './figures.js';

const SECRET = 'property-test-secret';
const CANARY = 'CANARY-9f1c: this file lies beside the store and must never be read or written';
const RUNS = scale(300, 5000);

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Sends a path byte for byte (no client-side normalisation of `..` or `%2F`). */
function send(base: string, method: string, path: string, body?: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers: body ? { 'Content-Length': body.length } : {} }, (res) => {
      let text = '';
      res.setEncoding('latin1');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Percent-encodes what an HTTP request line cannot carry raw (controls, space, non-ASCII); keeps the rest as given. */
function onTheWire(text: string): string {
  return Array.from(Buffer.from(text, 'utf8'))
    .map((b) => (b <= 0x20 || b >= 0x7f || b === 0x23 ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b)))
    .join('');
}

const VALID_NAME = 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
/** Mostly a valid value, sometimes a near miss: most names are valid, so uploads reach the catalog. */
const mostly = <T,>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: invalid, weight: 1 });
const yyyymmdd = fc.date({ min: new Date('2000-01-01'), max: new Date('2039-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10).replaceAll('-', ''));
const nameParts = {
  mission: mostly(fc.constant('imap'), fc.constantFrom('IMAP', 'imap2', '', 'im%61p')),
  instrument: mostly(fc.constantFrom(...IMAP_MISSION.instruments), fc.constantFrom('SWE', 'swe ', 'x', '..')),
  level: mostly(fc.constantFrom(...IMAP_MISSION.dataLevels.filter((l) => l !== 'l0')), fc.constantFrom('l3', 'L1A', '', 'l0')),
  descriptor: mostly(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), fc.oneof(fc.constantFrom('..', '%2F', 'sci%00', 'a_b'), fc.string({ maxLength: 12 }))),
  start: mostly(yyyymmdd, fc.constantFrom('20240230', '2024015', '99999999', '00000000')),
  /** '' = the start date (end dates before start dates are refused). */
  end: mostly(fc.constant(''), fc.stringMatching(/^\d{8}$/)),
  version: mostly(fc.stringMatching(/^v\d\d-\d\d$/), fc.constantFrom('v1-1', 'v00_01', 'V00-01')),
  extension: mostly(fc.constant('cdf'), fc.constantFrom('pkts', 'CDF', 'cdf%00', 'cdf/..', '')),
};
type Parts = { [K in keyof typeof nameParts]: string };
const nameOf = (p: Parts) => `${p.mission}_${p.instrument}_${p.level}_${p.descriptor}_${p.start}_${p.end || p.start}_${p.version}.${p.extension}`;
const generatedName = fc.record(nameParts).map(nameOf);
/** A generated name bare, under its own folders, under wrong ones, or with a climb out. */
const placedName = fc.tuple(fc.record(nameParts), fc.constantFrom('bare', 'canonical', 'canonical', 'wrong', 'climb')).map(([p, where]) => {
  const own = `${p.mission}/${p.instrument}/${p.level}/${p.start.slice(0, 4)}/${p.start.slice(4, 6)}/`;
  const dir = { bare: '', canonical: own, wrong: 'imap/mag/l2/2031/12/', climb: `${own}../../` }[where]!;
  return dir + nameOf(p);
});

/** File names: valid ones, near misses, and anything at all. */
const fileName = fc.oneof(
  generatedName,
  fc.constant(VALID_NAME),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** One path segment: real folders, traversal in every spelling, encodings, unicode, NUL, very long. */
const segment = fc.oneof(
  fc.constantFrom('imap', 'swe', 'l1a', '2024', '01', '..', '.', '', '%2e%2e', '..%2F..', '%2F', '%5C', '%00', '%zz', '%', '~', 'etc', 'passwd'),
  fileName,
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ minLength: 200, maxLength: 3000 }),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
);
const pathTail = fc.array(segment, { maxLength: 8 }).map((parts) => parts.join('/'));

const paramName = fc.oneof(
  fc.constantFrom('file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension'),
  fc.string({ maxLength: 15 }),
);
const paramValue = fc.oneof(segment, pathTail, fc.constantFrom('*', 'swe', 'l1a', '20240105', 'v00-01', 'cdf', "' OR 1=1--"));
const queryString = fc
  .array(fc.tuple(paramName, paramValue, fc.boolean()), { maxLength: 6 })
  .map((pairs) => pairs.map(([n, v, encode]) => (encode ? `${encodeURIComponent(n)}=${encodeURIComponent(v)}` : `${n}=${v}`)).join('&'));

/** A request a hostile or careless client might send to any of the service's routes. */
const hostileRequest = fc.oneof(
  fc.tuple(fc.constantFrom('/upload/', '/download/', '/v0/upload/science/', '/v0/download/', '/'), pathTail).map(([p, t]) => ({ method: 'GET', path: p + t })),
  // Upload and download of generated names, bare or under their folders (right or wrong ones).
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.constantFrom('/upload/', '/upload/', '/download/', '/v0/upload/science/'), placedName)
      .map(([p, path]) => ({ method: 'GET', path: p + path })),
  },
  queryString.map((q) => ({ method: 'GET', path: `/query?${q}` })),
  fc
    .tuple(fc.constantFrom('GET', 'PUT', 'HEAD'), pathTail, fc.option(fc.stringMatching(/^\d{1,12}$/)), fc.option(fc.stringMatching(/^[0-9a-f]{0,64}$/)))
    .map(([method, t, expires, signature]) => ({
      method,
      path: `/store/${t}?expires=${expires ?? ''}&signature=${signature ?? ''}`,
    })),
  // Correctly signed addresses for keys the service would never sign: the signature holds, the key must not.
  fc.tuple(fc.constantFrom<'GET' | 'PUT'>('GET', 'PUT'), fc.array(segment, { minLength: 1, maxLength: 8 })).map(([method, parts]) => {
    const key = parts.join('/');
    const expires = Math.floor(Date.now() / 1000) + 3600;
    const signature = new UrlSigner(Buffer.from(SECRET)).sign(method, key, expires);
    return { method, path: `/store/${parts.map(encodeURIComponent).join('/')}?expires=${expires}&signature=${signature}`, signedKey: key };
  }),
);

/** Every file under a folder, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe('hostile input, by property, against the real server', () => {
  let server: TestServer;
  let canary: string;
  let canaryMtime: number;
  let cases = 0;
  let fivexx = 0;
  let uploads = 0;

  beforeAll(async () => {
    server = await startTestServer({ signingSecret: SECRET, rateLimit: '0' });
    canary = join(server.home, VALID_NAME);
    await writeFile(canary, CANARY);
    canaryMtime = (await stat(canary)).mtimeMs;
  });
  afterAll(async () => {
    await server.stop();
  });

  it(`never answers 5xx, never leaks a byte from outside the store, never indexes a bad name (${RUNS} runs)`, { timeout: scale(120_000, 1_800_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest, async ({ method, path }) => {
        cases++;
        const wire = onTheWire(path);
        const answer = await send(server.url, method, wire, method === 'PUT' ? Buffer.from('hostile bytes') : undefined);
        if (answer.status >= 500) fivexx++;
        expect(answer.status, `${method} ${wire} -> ${answer.status} ${answer.body.slice(0, 200)}`).toBeLessThan(500);
        expect(answer.body).not.toContain('CANARY-9f1c');
        expect(answer.body).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
        if (answer.status >= 400 && method !== 'HEAD') expect(answer.body.length).toBeGreaterThan(0);
        // An upload address handed out is used, so that whatever it names would reach the catalog.
        if (method === 'GET' && answer.status === 200 && /^\/(v0\/)?upload\//.test(path)) {
          const address = new URL(JSON.parse(answer.body) as string);
          const put = await send(server.url, 'PUT', address.pathname + address.search, Buffer.from('property bytes'));
          expect([200, 409]).toContain(put.status);
          uploads++;
        }
      }),
      { numRuns: RUNS },
    );

    // The canary was neither read nor written, and nothing appeared beside the store.
    expect(await readFile(canary, 'utf8')).toBe(CANARY);
    expect((await stat(canary)).mtimeMs).toBe(canaryMtime);
    const allowed = ['catalog.db', 'catalog.db-shm', 'catalog.db-wal', 'signing-secret', VALID_NAME];
    // The store's notes (uploader and ingestion date kept with the bytes, store/local/object-note.ts)
    // live beside it, one for each stored object and nothing else.
    const outside = (await filesUnder(server.home)).filter((f) => !f.startsWith('store/') && !f.startsWith('store.notes/'));
    expect(outside.filter((f) => !allowed.includes(f))).toEqual([]);
    // Every stored object and every record is a canonical path of a valid name.
    const stored = await filesUnder(join(server.home, 'store'));
    const notes = (await filesUnder(server.home)).filter((f) => f.startsWith('store.notes/'));
    expect(notes.map((f) => f.slice('store.notes/'.length).replace(/\.json$/, '')).sort()).toEqual([...stored].sort());
    const records = (await (await fetch(`${server.url}/query`)).json()) as { file_path: string }[];
    for (const key of [...stored, ...records.map((r) => r.file_path)]) {
      const resolved = resolveRequestPath(key, IMAP_MISSION);
      expect(resolved.kind === 'file' && resolved.path === key, key).toBe(true);
    }
    recordFigures('property', { cases, fivexx, uploads, stored: stored.length, records: records.length });
  });
});
