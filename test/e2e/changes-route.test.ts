import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const swe = (day: number) => `imap/swe/l1a/2024/01/imap_swe_l1a_sci_202401${String(day).padStart(2, '0')}_202401${String(day).padStart(2, '0')}_v00-01.cdf`;

interface Entry {
  id: number;
  time: string;
  change: string;
  file_path: string;
  record: Record<string, unknown>;
}

describe('GET /changes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    for (let day = 1; day <= 5; day++) expect((await uploadFile(server.url, swe(day), `bytes ${day}`)).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const get = (query: string) => fetch(`${server.url}/changes${query}`);

  it('replays every ingest from after=0, oldest first, each entry with the record a query answers', async () => {
    const res = await get('?after=0');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-next-after')).toBeNull();
    const entries = (await res.json()) as Entry[];
    expect(entries.map((e) => [e.change, e.file_path])).toEqual([1, 2, 3, 4, 5].map((d) => ['created', swe(d)]));
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.id).toBeGreaterThan(entries[i - 1]!.id);
    const records = (await (await fetch(`${server.url}/query?instrument=swe`)).json()) as unknown[];
    expect(entries.map((e) => e.record)).toEqual(records);
    for (const e of entries) expect(Object.keys(e)).toEqual(['id', 'time', 'change', 'file_path', 'record']);
    // Without parameters: the same (after=0, limit 1000).
    expect(await (await get('')).json()).toEqual(entries);
  });

  it('pages by limit with X-Next-After while the page is full, and answers [] past the end', async () => {
    const all = (await (await get('')).json()) as Entry[];
    const seen: Entry[] = [];
    let after = 0;
    for (;;) {
      const res = await get(`?after=${after}&limit=2`);
      const page = (await res.json()) as Entry[];
      seen.push(...page);
      const next = res.headers.get('x-next-after');
      if (next === null) break;
      expect(Number(next)).toBe(page.at(-1)!.id);
      after = Number(next);
    }
    expect(seen).toEqual(all);
    const tail = await get(`?after=${all.at(-1)!.id}`);
    expect(await tail.text()).toBe('[]');
    expect(tail.headers.get('x-next-after')).toBeNull();
    // A full page whose last entry ends the log still says X-Next-After: the next page is [].
    const full = await get(`?after=${all[2]!.id}&limit=2`);
    expect(full.headers.get('x-next-after')).toBe(String(all[4]!.id));
  });

  it('refuses a bad after or limit, a repeated or unknown parameter, in words', async () => {
    for (const [query, words] of [
      ['?after=-1', 'after=-1 is not an entry id.'],
      ['?after=abc', 'after=abc is not an entry id.'],
      ['?after=1.5', 'after=1.5 is not an entry id.'],
      ['?limit=0', 'limit=0 is not a whole number from 1 to 10000.'],
      ['?limit=10001', 'limit=10001 is not a whole number from 1 to 10000.'],
      ['?limit=', 'limit= is not a whole number from 1 to 10000.'],
      ['?after=1&after=2', 'after is given more than once.'],
      ['?instrument=swe', 'instrument is not a parameter of GET /changes.'],
    ] as const) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect(res.headers.get('x-error-code')).toBe('SDC_INVALID_CHANGES_PARAMETER');
      expect(await res.text()).toBe(`${words} GET /changes takes after (an entry id, a whole number >= 0; 0 = from the start) and limit (1 to 10000, default 1000).`);
    }
  });

  it('streams a page of thousands of entries whole, bounded by limit', async () => {
    const { catalog } = server.ctx;
    const { syntheticRecords } = await import('../../src/catalog/index.js');
    await catalog.bulkLoad(syntheticRecords(server.ctx.mission, 2500, 0));
    const res = await get('?limit=2100');
    const page = (await res.json()) as Entry[];
    expect(page).toHaveLength(2100);
    expect(res.headers.get('x-next-after')).toBe(String(page.at(-1)!.id));
    const rest = (await (await get(`?after=${page.at(-1)!.id}&limit=10000`)).json()) as Entry[];
    expect(rest).toHaveLength(5 + 2500 - 2100);
  });
});
