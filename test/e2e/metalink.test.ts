import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xmlEscape } from '../../src/service/index.js';
import { HAVE_ARIA2, NO_ARIA2, runAria2 } from '../helpers/aria2.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const CDF = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
const LARGE = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf';
const PKTS = 'imap/swe/l0/2024/01/imap_swe_l0_raw_20240105_20240105_v00-01.pkts';
const OTHER = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The <file> elements of a document: name, size, hash and address (XML entities undone). */
function filesOf(document: string): { name: string; size: number; sha256: string; url: string }[] {
  const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return [...document.matchAll(/<file name="([^"]*)"><size>(\d+)<\/size><hash type="sha-256">([0-9a-f]{64})<\/hash><url>([^<]*)<\/url><\/file>/g)].map((m) => ({
    name: unescape(m[1]!),
    size: Number(m[2]),
    sha256: m[3]!,
    url: unescape(m[4]!),
  }));
}

describe('GET /query?format=metalink on the local store', () => {
  let server: TestServer;
  let work: string;
  const bytes = new Map<string, Buffer>([
    [CDF, Buffer.from('CDF bytes of the 5th\n')],
    [LARGE, randomBytes(3 * 1024 * 1024 + 17)],
    [PKTS, randomBytes(4096)],
    [OTHER, Buffer.from('another instrument')],
  ]);

  beforeAll(async () => {
    server = await startTestServer({ downloadTtl: '600' });
    for (const [path, body] of bytes) expect((await uploadFile(server.url, path, body)).status).toBe(200);
    work = await mkdtemp(join(tmpdir(), 'sdc-metalink-'));
  });
  afterAll(async () => {
    await server?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const metalink = (query: string, headers: Record<string, string> = {}) => fetch(`${server.url}/query?${query}`, { headers });

  it('lists every matching file with its size, SHA-256 and a signed address valid SDC_DOWNLOAD_TTL', async () => {
    const res = await metalink('instrument=swe&format=metalink');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/metalink4+xml');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="sdc-files.meta4"');
    const text = await res.text();
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n')).toBe(true);
    expect(text.endsWith('</metalink>\n')).toBe(true);
    expect(text).toContain('signed for 600 s');
    const files = filesOf(text);
    expect(files.map((f) => f.name)).toEqual([PKTS, CDF, LARGE]);
    const now = Math.floor(Date.now() / 1000);
    for (const file of files) {
      const body = bytes.get(file.name)!;
      expect(file).toMatchObject({ size: body.length, sha256: sha256(body) });
      // Raw `&` would make the document ill-formed: every one in an address is an entity.
      expect(text).not.toMatch(/&(?!amp;|lt;|gt;|quot;|apos;)/);
      const url = new URL(file.url);
      expect(url.origin).toBe(server.url);
      expect(url.pathname).toBe(`/store/${file.name}`);
      expect(Number(url.searchParams.get('expires')) - now).toBeGreaterThan(590);
      expect(Number(url.searchParams.get('expires')) - now).toBeLessThanOrEqual(601);
      const got = await fetch(file.url);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
    }
  });

  it('builds its addresses from the store, never from the Host a client sends', async () => {
    const res = await request(`${server.url}/query?instrument=mag&format=metalink`, { headers: { host: 'evil.example' } });
    const text = await res.body.text();
    expect(filesOf(text).map((f) => new URL(f.url).origin)).toEqual([server.url]);
    expect(text).not.toContain('evil.example');
  });

  it('keeps the query\'s pages, its other forms and its refusals', async () => {
    const page = await metalink('instrument=swe&format=metalink&limit=2');
    expect(page.headers.get('x-total-count')).toBe('3');
    const next = page.headers.get('link');
    expect(next).toMatch(/^<\/query\?instrument=swe&format=metalink&limit=2&cursor=[^>]+>; rel="next"$/);
    expect(filesOf(await page.text()).map((f) => f.name)).toEqual([PKTS, CDF]);
    const rest = await fetch(`${server.url}${/<([^>]+)>/.exec(next!)![1]}`);
    expect(filesOf(await rest.text()).map((f) => f.name)).toEqual([LARGE]);
    expect(rest.headers.get('link')).toBeNull();

    // Chosen by Accept too; and the earlier form answers the same document.
    const accepted = await metalink('instrument=mag', { Accept: 'application/metalink4+xml' });
    expect(filesOf(await accepted.text()).map((f) => f.name)).toEqual([OTHER]);
    const earlier = await fetch(`${server.url}/v0/query?instrument=mag&format=metalink`);
    expect(earlier.headers.get('content-type')).toBe('application/metalink4+xml');
    expect(filesOf(await earlier.text()).map((f) => f.name)).toEqual([OTHER]);

    // A Metalink lists at least one file (RFC 5854): no match is a 404 that says so.
    const none = await metalink('instrument=mag&data_level=l2&format=metalink');
    expect(none.status).toBe(404);
    expect(none.headers.get('x-error-code')).toBe('SDC_NOTHING_TO_LIST');
    expect(await none.json()).toMatch(/^No file matches this query/);

    const bad = await metalink('format=meta4');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-error-code')).toBe('SDC_INVALID_QUERY');
    expect(await bad.json()).toBe('Invalid format "meta4": expected one of json, csv, ndjson, metalink.');
  });

  it('escapes what XML would read as markup, and drops what XML cannot carry', () => {
    expect(xmlEscape(`a&b<c>"d"'e'\u0001f`)).toBe('a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&apos;\ufffdf');
  });

  it.skipIf(!HAVE_ARIA2)(HAVE_ARIA2 ? 'is fetched and verified whole by aria2c -M' : `aria2c -M: ${NO_ARIA2}`, async () => {
    const document = join(work, 'swe.meta4');
    await writeFile(document, await (await metalink('instrument=swe&format=metalink')).text());
    const into = join(work, 'data');
    const run = await runAria2(document, into);
    expect(run.code, run.output).toBe(0);
    // Laid out as the archive (and `sdc download`) lays them out.
    for (const path of [PKTS, CDF, LARGE]) expect((await readFile(join(into, path))).equals(bytes.get(path)!), path).toBe(true);
  });

  it.skipIf(!HAVE_ARIA2)(HAVE_ARIA2 ? 'makes aria2c report a file whose stored bytes changed out of band' : `aria2c checksum failure: ${NO_ARIA2}`, async () => {
    // Same size, other bytes, written behind the archive's back (stored files are read-only).
    const stored = join(server.home, 'store', ...CDF.split('/'));
    await chmod(stored, 0o644);
    const changed = Buffer.from(bytes.get(CDF)!.toString().replace('5th', '6th'));
    await writeFile(stored, changed);
    const document = join(work, 'changed.meta4');
    await writeFile(document, await (await metalink('instrument=swe&format=metalink')).text());
    const into = join(work, 'changed');
    const run = await runAria2(document, into);
    expect(run.code, run.output).toBe(32); // aria2's "checksum validation failed"
    expect(run.output).toContain(`Checksum error detected. file=${join(into, CDF)}`);
    // The untouched files were still fetched and verified.
    for (const path of [PKTS, LARGE]) expect((await readFile(join(into, path))).equals(bytes.get(path)!), path).toBe(true);
  });
});
