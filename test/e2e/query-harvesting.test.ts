import { parse as parseCsv } from 'csv-parse/sync';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticRecords, type FileRecord } from '../../src/catalog/index.js';
import { IMAP_MISSION } from '../../src/mission/index.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/** A record of a given name, indexed at a given time. */
function record(fileName: string, ingestion = '2025-06-01T00:00:00.000Z'): FileRecord {
  const [, instrument, level, descriptor, start, end, versionExt] = fileName.split('_') as string[];
  const [version, extension] = versionExt!.split('.') as [string, string];
  return {
    file_path: `imap/${instrument}/${level}/${start!.slice(0, 4)}/${start!.slice(4, 6)}/${fileName}`,
    instrument: instrument!,
    data_level: level!,
    descriptor: descriptor!,
    start_date: start!,
    end_date: end!,
    version,
    extension,
    ingestion_date: ingestion,
    size: 1,
    sha256: '0'.repeat(64),
  };
}

async function getJson<T>(url: string): Promise<{ status: number; headers: Headers; body: T }> {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, body: (await res.json()) as T };
}

describe('query for harvesters: pages, since, latest, overlap, formats', () => {
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = server.url;
    // 10,000 synthetic swe records (one in 12 synthetic records is swe), plus hand-made ones.
    const swe = [...syntheticRecords(IMAP_MISSION, 120_000)].filter((r) => r.instrument === 'swe');
    expect(swe).toHaveLength(10_000);
    await server.ctx.catalog.insertMany(swe);
    await server.ctx.catalog.insertMany([
      record('imap_mag_l2_norm_20240110_20240110_v01-09.cdf'),
      record('imap_mag_l2_norm_20240110_20240110_v01-10.cdf'),
      record('imap_mag_l2_norm_20240110_20240110_v00-99.cdf'),
      record('imap_mag_l2_norm_20240111_20240111_v01-02.cdf'),
      record('imap_mag_l2_burst_20240110_20240110_v01-01.cdf'),
      // Spans for overlap: starts before the range and ends inside it; inside; after.
      record('imap_hit_l1a_span_20240128_20240203_v00-01.cdf'),
      record('imap_hit_l1a_span_20240205_20240206_v00-01.cdf'),
      record('imap_hit_l1a_span_20240301_20240302_v00-01.cdf'),
    ]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('walks every page of a 10k-match query exactly once, while files are being added', async () => {
    const original: string[] = [];
    for await (const r of server.ctx.catalog.query({ instrument: 'swe' })) original.push(r.file_path);
    expect(original).toHaveLength(10_000);

    const seen: string[] = [];
    let url: string | undefined = `${base}/query?instrument=swe&limit=1000`;
    let pages = 0;
    while (url) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      if (pages === 0) expect(res.headers.get('x-total-count')).toBe('10000');
      const page = (await res.json()) as FileRecord[];
      expect(page.length).toBeLessThanOrEqual(1000);
      seen.push(...page.map((r) => r.file_path));
      // Meanwhile, new swe files arrive, spread over the path order (before and after the cursor).
      const extra = [...syntheticRecords(IMAP_MISSION, 120, 500_000 + pages * 120_000)].filter((r) => r.instrument === 'swe');
      await server.ctx.catalog.insertMany(extra);
      pages++;
      const link = res.headers.get('link');
      // The link is relative (no SDC_PUBLIC_URL): resolved against the address called.
      url = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!, base).href : undefined;
    }
    expect(pages).toBeGreaterThanOrEqual(10);
    expect(new Set(seen).size).toBe(seen.length); // nothing twice
    const seenSet = new Set(seen);
    expect(original.filter((p) => !seenSet.has(p))).toEqual([]); // nothing that existed is skipped
    expect(seen).toEqual([...seen].sort()); // in file_path order across pages
  });

  it('pages in any sort order and refuses a cursor from another sort', async () => {
    const a = await fetch(`${base}/query?instrument=mag&sort=-start_date&limit=2`);
    const pageA = (await a.json()) as FileRecord[];
    expect(pageA.map((r) => r.start_date)).toEqual(['20240111', '20240110']);
    const next = /^<([^>]+)>/.exec(a.headers.get('link')!)![1]!;
    const rest = (await (await fetch(new URL(next, base))).json()) as FileRecord[];
    expect(rest.map((r) => r.start_date)).toEqual(['20240110', '20240110']);
    expect(new Set([...pageA, ...rest].map((r) => r.file_path)).size).toBe(4);
    const cursor = a.headers.get('x-next-cursor')!;
    const wrong = await fetch(`${base}/query?instrument=mag&limit=2&cursor=${cursor}`);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatch(/cursor belongs to sort=-start_date/);
    expect((await fetch(`${base}/query?limit=0`)).status).toBe(400);
    expect((await fetch(`${base}/query?cursor=garbage`)).status).toBe(400);
  });

  it('"since" returns only files indexed after the given time', async () => {
    const before = new Date().toISOString();
    const name = 'imap_lo_l1b_new_20240105_20240105_v00-01.cdf';
    expect((await uploadFile(base, name, 'fresh')).status).toBe(200);
    const newer = await getJson<FileRecord[]>(`${base}/query?ingestion_start_date=${before}`);
    expect(newer.body.map((r) => r.file_path)).toEqual([`imap/lo/l1b/2024/01/${name}`]);
    expect(newer.body[0]!.ingestion_date >= before).toBe(true);
    const day = await getJson<FileRecord[]>(`${base}/query?ingestion_start_date=20250601&ingestion_end_date=20250601`);
    expect(day.body).toHaveLength(8);
    expect((await fetch(`${base}/query?ingestion_start_date=2024-01-05`)).status).toBe(400);
  });

  it('version=latest keeps the highest version of each product, numerically, and keeps start dates apart', async () => {
    const { body } = await getJson<FileRecord[]>(`${base}/query?instrument=mag&version=latest`);
    expect(body.map((r) => `${r.descriptor} ${r.start_date} ${r.version}`)).toEqual([
      'burst 20240110 v01-01',
      'norm 20240110 v01-10',
      'norm 20240111 v01-02',
    ]);
  });

  it('overlap=true selects files whose span meets the range; the default bounds the start date', async () => {
    const range = 'instrument=hit&start_date=20240201&end_date=20240210';
    const starts = await getJson<FileRecord[]>(`${base}/query?${range}`);
    expect(starts.body.map((r) => r.start_date)).toEqual(['20240205']);
    const overlaps = await getJson<FileRecord[]>(`${base}/query?${range}&overlap=true`);
    expect(overlaps.body.map((r) => r.start_date)).toEqual(['20240128', '20240205']);
    expect((await fetch(`${base}/query?start_date=20240210&end_date=20240201&overlap=true`)).status).toBe(400);
  });

  it('answers JSON, CSV and NDJSON that real parsers read, by format= or Accept', async () => {
    const json = await getJson<FileRecord[]>(`${base}/query?instrument=mag`);
    const csvRes = await fetch(`${base}/query?instrument=mag&format=csv`);
    expect(csvRes.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parseCsv(await csvRes.text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.file_path)).toEqual(json.body.map((r) => r.file_path));
    expect(Object.keys(rows[0]!).slice(0, 8)).toEqual(['file_path', 'instrument', 'data_level', 'descriptor', 'start_date', 'end_date', 'version', 'extension']);
    const nd = await fetch(`${base}/query?instrument=mag`, { headers: { Accept: 'application/x-ndjson' } });
    expect(nd.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await nd.text()).trim().split('\n').map((l) => JSON.parse(l) as FileRecord);
    expect(lines).toEqual(json.body);
    const accepted = await fetch(`${base}/query?instrument=mag`, { headers: { Accept: 'text/csv' } });
    expect(accepted.headers.get('content-type')).toMatch(/^text\/csv/);
    const bad = await fetch(`${base}/query?format=xml`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toBe('Invalid format "xml": expected one of json, csv, ndjson, metalink.');
  });

  it('lists every accepted parameter, the new ones included, when one is unknown', async () => {
    const res = await fetch(`${base}/query?since=20240101`);
    expect(res.status).toBe(400);
    expect(await res.json()).toBe(
      'since is not a valid query parameter. Valid parameters are: file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ingestion_start_date, ingestion_end_date, overlap, status, released, release, limit, cursor, sort, format',
    );
  });
});

describe('live feed (Server-Sent Events)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  /** Events of one connection, as a real EventSource client receives them. */
  function connect(url: string, lastEventId?: string) {
    const events: { id: string; record: FileRecord }[] = [];
    const source = new EventSource(url, {
      fetch: (input, init) =>
        fetch(input, { ...init, headers: { ...(init?.headers ?? {}), ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } }),
    });
    source.addEventListener('file', (e) => events.push({ id: e.lastEventId, record: JSON.parse(e.data) as FileRecord }));
    const opened = new Promise<void>((resolve, reject) => {
      source.onopen = () => resolve();
      source.onerror = (err) => reject(new Error(`feed error: ${String(err.message)}`));
    });
    return { source, events, opened };
  }

  async function until(check: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
    if (!check()) throw new Error(`timed out waiting for ${what}`);
  }

  it('announces files indexed after the client connected, and resumes from the last id without gaps or repeats', async () => {
    const names = [1, 2, 3, 4].map((i) => `imap_swe_l2_feed_2024010${i}_2024010${i}_v00-01.cdf`);
    await uploadFile(server.url, 'imap_swe_l2_before_20240101_20240101_v00-01.cdf', 'old');
    const a = connect(`${server.url}/events?instrument=swe`);
    await a.opened;
    await uploadFile(server.url, names[0]!, '1');
    await uploadFile(server.url, names[1]!, '2');
    await uploadFile(server.url, 'imap_mag_l2_other_20240101_20240101_v00-01.cdf', 'not swe');
    await until(() => a.events.length >= 2, 'two events');
    a.source.close();
    expect(a.events.map((e) => e.record.file_path.split('/').pop())).toEqual(names.slice(0, 2));

    // While disconnected, more files arrive; resuming from the last id gets exactly those.
    await uploadFile(server.url, names[2]!, '3');
    await uploadFile(server.url, names[3]!, '4');
    const b = connect(`${server.url}/events?instrument=swe`, a.events[1]!.id);
    await b.opened;
    await until(() => b.events.length >= 2, 'the missed events');
    // Polls go on after those two: a file indexed now arrives by a later poll, and nothing before it repeats.
    const later = 'imap_swe_l2_feed_20240105_20240105_v00-01.cdf';
    await uploadFile(server.url, later, '5');
    await until(() => b.events.some((e) => e.record.file_path.endsWith(later)), 'a later poll');
    b.source.close();
    expect(b.events.map((e) => e.record.file_path.split('/').pop())).toEqual([...names.slice(2), later]);
  });

  it('refuses paging parameters and a malformed Last-Event-ID with 400', async () => {
    expect((await fetch(`${server.url}/events?limit=5`)).status).toBe(400);
    expect((await fetch(`${server.url}/events?instrument=nope`)).status).toBe(400);
    expect((await fetch(`${server.url}/events`, { headers: { 'Last-Event-ID': 'x' } })).status).toBe(400);
  });
});
