import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unknownParameterMessage } from '../../src/catalog/index.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const MAG_NAME = 'imap_mag_l1b_burst_20240301_20240302_v01-02.cdf';
const MAG_PATH = `imap/mag/l1b/2024/03/${MAG_NAME}`;
const INVALID_INSTRUMENT = 'Invalid instrument. Valid instruments are: ultra-45, codice, glows, hit, lo, mag, swe, hi-45, idex, ultra-90, hi-90, swapi';

describe('the earlier form of the API (/v0) and its root aliases', () => {
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    server = await startTestServer();
    base = server.url;
    expect((await uploadFile(base, SAMPLE_PATH, 'swe bytes')).status).toBe(200);
    expect((await uploadFile(base, MAG_PATH, 'mag bytes')).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  describe('GET /v0/upload/science/{path}', () => {
    it('hands out a signed address that stores the file, which then queries and downloads', async () => {
      const path = 'imap/hit/l0/2024/02/imap_hit_l0_raw_20240210_20240210_v00-01.pkts';
      const res = await fetch(`${base}/v0/upload/science/${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const address = (await res.json()) as string;
      expect((await fetch(address, { method: 'PUT', body: 'hit bytes', headers: { 'Content-Type': '' } })).status).toBe(200);
      expect(await (await fetch(`${base}/v0/download/${path}`)).text()).toBe('hit bytes');
      expect(await (await fetch(`${base}/v0/query?instrument=hit`)).json()).toBe("[('hit', 'l0', 'raw', '20240210', '20240210', 'v00-01', 'pkts')]");
    });

    it('takes a bare file name as well as the full path', async () => {
      const res = await fetch(`${base}/v0/upload/science/imap_lo_l2_sci_20240105_20240105_v00-01.cdf`);
      expect(res.status).toBe(200);
      expect((await res.json()) as string).toContain('/imap/lo/l2/2024/01/imap_lo_l2_sci_20240105_20240105_v00-01.cdf?');
    });

    it('answers 400 saying no pre-signed address could be generated, and which rule failed', async () => {
      const cases: [string, string][] = [
        ['imap_bad_l1a_sci_20240105_20240105_v00-01.cdf', INVALID_INSTRUMENT],
        ['imap_swe_l1a_sci_2024015_20240105_v00-01.cdf', 'Invalid start date format. Please use YYYYMMDD format.'],
        ['imap_swe_l1a_sci_20240105_20240105_v0-01.cdf', 'Invalid version format. Please use vxx-xx format.'],
        ['imap_swe_l0_sci_20240105_20240105_v00-01.cdf', 'Invalid extension.'],
        ['not-a-science-file.cdf', 'Invalid filename.'],
      ];
      for (const [name, rule] of cases) {
        const res = await fetch(`${base}/v0/upload/science/${name}`);
        expect(res.status, name).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        const body = await res.text();
        expect(body).toMatch(/^A pre-signed upload address could not be generated\. The file name must follow the mission's naming convention /);
        expect(body).toContain('<mission>_<instrument>_<datalevel>_<descriptor>_<startdate>_<enddate>_<version>.<extension>');
        expect(body).toContain(rule);
      }
    });

    it('answers 409 for a stored file, as the current form does', async () => {
      const res = await fetch(`${base}/v0/upload/science/${SAMPLE_PATH}`);
      expect(res.status).toBe(409);
      expect(await res.text()).toBe(`${SAMPLE_PATH} already exists.`);
    });

    it('has no upload address without /science', async () => {
      const res = await fetch(`${base}/v0/upload/${SAMPLE_PATH}`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('GET /v0/upload/science/{path}');
    });
  });

  describe('GET /upload/science/{path} at the root', () => {
    it('is an alias of /upload/{path}, with the current form\'s messages', async () => {
      const name = 'imap_idex_l1_sci_20240105_20240105_v00-01.cdf';
      const alias = await fetch(`${base}/upload/science/imap/idex/l1/2024/01/${name}`);
      expect(alias.status).toBe(200);
      expect((await alias.json()) as string).toMatch(new RegExp(`/store/imap/idex/l1/2024/01/${name}\\?`));
      expect((await fetch(`${base}/upload/science/${name}`)).status).toBe(200);

      const stored = await fetch(`${base}/upload/science/${SAMPLE_PATH}`);
      expect(stored.status).toBe(409);
      expect(await stored.text()).toBe(`${SAMPLE_PATH} already exists.`);

      const bad = await fetch(`${base}/upload/science/imap_bad_l1a_sci_20240105_20240105_v00-01.cdf`);
      expect(bad.status).toBe(400);
      expect(await bad.text()).toBe(INVALID_INSTRUMENT);
    });
  });

  describe('GET /v0/download/{path-or-name}', () => {
    it('redirects for a full path and for a bare file name', async () => {
      for (const value of [SAMPLE_PATH, SAMPLE_NAME]) {
        const res = await fetch(`${base}/v0/download/${value}`, { redirect: 'manual' });
        expect(res.status).toBe(302);
        const location = res.headers.get('location');
        expect(location).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/store/${SAMPLE_PATH}\\?`));
        expect(await res.json()).toEqual({ download_url: location });
        expect(await (await fetch(location!)).text()).toBe('swe bytes');
      }
    });

    it('answers 400 saying the value is not a valid object-store URI, with the example and the rule', async () => {
      const noFile = await fetch(`${base}/v0/download/imap/swe/l1a/`);
      expect(noFile.status).toBe(400);
      const text = await noFile.text();
      expect(text).toContain('"imap/swe/l1a/" is not a valid object-store URI');
      expect(text).toContain('s3://bucket/path/file.ext');
      expect(text).toContain('No file name in the path');

      const badName = await fetch(`${base}/v0/download/imap_swe_l1a_sci_20240105_20240105_v00-1.cdf`);
      expect(badName.status).toBe(400);
      expect(await badName.text()).toMatch(/is not a valid object-store URI\. Example input: s3:\/\/bucket\/path\/file\.ext\. Invalid version format/);

      expect((await fetch(`${base}/v0/download`)).status).toBe(400);
    });

    it('answers 404 for an absent file, as the current form does', async () => {
      const res = await fetch(`${base}/v0/download/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('Please include the full path to the file');
    });
  });

  describe('GET /v0/query', () => {
    it('answers one JSON string of Python tuples in the spec\'s field order, ordered by file_path', async () => {
      const res = await fetch(`${base}/v0/query?extension=cdf`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const body = (await res.json()) as unknown;
      expect(typeof body).toBe('string');
      expect(body).toBe(
        "[('mag', 'l1b', 'burst', '20240301', '20240302', 'v01-02', 'cdf'), " +
          "('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]",
      );
    });

    it('filters with the current form\'s parameters, and renders no match as "[]"', async () => {
      expect(await (await fetch(`${base}/v0/query?instrument=swe&version=*`)).json()).toBe(
        "[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]",
      );
      expect(await (await fetch(`${base}/v0/query?file_path=${MAG_NAME}`)).json()).toBe(
        "[('mag', 'l1b', 'burst', '20240301', '20240302', 'v01-02', 'cdf')]",
      );
      const none = await fetch(`${base}/v0/query?instrument=glows`);
      expect(none.status).toBe(200);
      expect(await none.text()).toBe('"[]"');
    });

    it('has one representation: Accept is not consulted, and format other than json is refused', async () => {
      const tuples = "[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]";
      const csvAccept = await fetch(`${base}/v0/query?instrument=swe`, { headers: { Accept: 'text/csv' } });
      expect(csvAccept.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await csvAccept.json()).toBe(tuples);
      expect(await (await fetch(`${base}/v0/query?instrument=swe&format=json`)).json()).toBe(tuples);
      const csv = await fetch(`${base}/v0/query?instrument=swe&format=csv`);
      expect(csv.status).toBe(400);
      expect(await csv.json()).toMatch(/^The earlier form \(\/v0\/query\) answers one string of Python tuples only/);
    });

    it('pages as the current form does, with a Link to the next page under /v0', async () => {
      const first = await fetch(`${base}/v0/query?start_date=20240101&end_date=20240331&extension=cdf&limit=1`);
      expect(first.headers.get('x-total-count')).toBe('2');
      expect(await first.json()).toBe("[('mag', 'l1b', 'burst', '20240301', '20240302', 'v01-02', 'cdf')]");
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1];
      expect(next).toMatch(/^\/v0\/query\?start_date=20240101&end_date=20240331&extension=cdf&limit=1&cursor=/);
      const second = await fetch(new URL(next!, base));
      expect(await second.json()).toBe("[('swe', 'l1a', 'sci', '20240105', '20240105', 'v00-01', 'cdf')]");
      expect(second.headers.get('link')).toBeNull();
    });

    it('streams a long answer that is still one valid JSON string', async () => {
      const days = Array.from({ length: 1200 }, (_, i) => new Date(Date.UTC(2030, 0, 1) + i * 86_400_000).toISOString().slice(0, 10).replace(/-/g, ''));
      for (const day of days) {
        const name = `imap_codice_l2_long_${day}_${day}_v00-01.cdf`;
        await server.ctx.catalog.insert({
          file_path: `imap/codice/l2/${day.slice(0, 4)}/${day.slice(4, 6)}/${name}`,
          instrument: 'codice',
          data_level: 'l2',
          descriptor: 'long',
          start_date: day,
          end_date: day,
          version: 'v00-01',
          extension: 'cdf',
          ingestion_date: new Date().toISOString(),
          size: 0,
          sha256: '0'.repeat(64),
        });
      }
      const res = await fetch(`${base}/v0/query?descriptor=long`);
      const raw = await res.text();
      expect(raw.length).toBeGreaterThan(64 * 1024); // more than one chunk
      expect(JSON.parse(raw)).toBe(`[${days.map((d) => `('codice', 'l2', 'long', '${d}', '${d}', 'v00-01', 'cdf')`).join(', ')}]`);
    });

    it('refuses an unknown, repeated or malformed parameter with the current form\'s 400 and headers', async () => {
      for (const [query, text] of [
        ['color=red', unknownParameterMessage('color')],
        ['instrument=swe&instrument=mag', 'instrument was given more than once. Give each query parameter at most once.'],
        ['start_date=2024-01-05', 'Invalid start_date "2024-01-05": expected a real date in YYYYMMDD format, e.g. 20240105.'],
      ]) {
        const v0 = await fetch(`${base}/v0/query?${query}`);
        const current = await fetch(`${base}/query?${query}`);
        expect(v0.status).toBe(400);
        expect(v0.headers.get('content-type')).toMatch(/^application\/json/);
        expect(v0.headers.get('access-control-allow-origin')).toBe('*');
        expect(await v0.json()).toBe(text);
        expect(await current.json()).toBe(text);
      }
    });
  });

  it('leaves the current form as it was', async () => {
    const records = (await (await fetch(`${base}/query?instrument=swe`)).json()) as { file_path: string }[];
    expect(records.map((r) => r.file_path)).toEqual([SAMPLE_PATH]);
    expect((await fetch(`${base}/download/${SAMPLE_NAME}`, { redirect: 'manual' })).status).toBe(302);
  });
});
