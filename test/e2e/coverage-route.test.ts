import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

const swe = (date: string, version = 'v00-01') => `imap/swe/l1a/2024/01/imap_swe_l1a_sci_${date}_${date}_${version}.cdf`;

describe('GET /coverage', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    for (const path of [swe('20240101'), swe('20240102'), swe('20240102', 'v00-02'), swe('20240104'), 'imap/mag/l2/2024/01/imap_mag_l2_norm_20240103_20240105_v01-00.cdf']) {
      expect((await uploadFile(server.url, path, '12345')).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  const get = (query: string) => fetch(`${server.url}/coverage${query}`);

  it('answers spans of covered days per instrument and data level, with the query headers', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toEqual([
      { instrument: 'mag', data_level: 'l2', start_date: '20240103', end_date: '20240105', files: 1, size: 5 },
      { instrument: 'swe', data_level: 'l1a', start_date: '20240101', end_date: '20240102', files: 3, size: 15 },
      { instrument: 'swe', data_level: 'l1a', start_date: '20240104', end_date: '20240104', files: 1, size: 5 },
    ]);
  });

  it('takes the parameters of /query, and a span\'s search returns its files', async () => {
    expect(await (await get('?instrument=swe&version=v00-02')).json()).toEqual([
      { instrument: 'swe', data_level: 'l1a', start_date: '20240102', end_date: '20240102', files: 1, size: 5 },
    ]);
    const [span] = (await (await get('?instrument=swe&start_date=20240101&end_date=20240103')).json()) as { files: number }[];
    const files = (await (await fetch(`${server.url}/query?instrument=swe&data_level=l1a&start_date=20240101&end_date=20240102`)).json()) as unknown[];
    expect(files).toHaveLength(span!.files);
    expect(await (await get('?descriptor=burst')).json()).toEqual([]);
    // The additive filters of /query apply too.
    expect(await (await get('?instrument=swe&version=latest&start_date=20240102&end_date=20240102')).json()).toEqual([
      { instrument: 'swe', data_level: 'l1a', start_date: '20240102', end_date: '20240102', files: 1, size: 5 },
    ]);
    expect(await (await get('?instrument=mag&overlap=true&start_date=20240104&end_date=20240104')).json()).toHaveLength(1);
    expect(await (await get('?instrument=mag&start_date=20240104&end_date=20240104')).json()).toEqual([]);
  });

  it('refuses what /query refuses, with the same messages', async () => {
    for (const bad of ['?instrument=foo', '?start_date=2024', '?instrument=swe&instrument=mag', '?version=1', '?start_date=20240105&end_date=20240101', '?overlap=maybe']) {
      const res = await get(bad);
      const ref = await fetch(`${server.url}/query${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toBe(await ref.json());
    }
    const valid =
      'Valid parameters are: file_path, instrument, data_level, descriptor, start_date, end_date, version, extension, ' +
      'ingestion_start_date, ingestion_end_date, overlap, status, released, release';
    for (const name of ['bogus', 'limit', 'cursor', 'sort', 'format']) {
      const res = await get(`?${name}=1`);
      expect(res.status).toBe(400);
      expect(await res.json()).toBe(`${name} is not a valid coverage parameter. ${valid}`);
    }
  });
});
