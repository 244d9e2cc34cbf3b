import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

/** The value of one sample line of the Prometheus text format, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('/metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('counts requests by route and status, bytes, uploads stored, 409s, signature and key failures, catalog size', async () => {
    const bytes = 'x'.repeat(5000);
    expect((await uploadFile(server.url, SAMPLE_PATH, bytes)).status).toBe(200);
    expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`)).status).toBe(409);
    const location = (await fetch(`${server.url}/download/${SAMPLE_PATH}`, { redirect: 'manual' })).headers.get('location')!;
    expect(await (await fetch(location)).text()).toBe(bytes);
    expect((await fetch(location.replace(/signature=[0-9a-f]{4}/, 'signature=0000'))).status).toBe(403);
    await server.ctx.catalog.keys().create('k');
    expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`)).status).toBe(401);
    expect((await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { 'X-API-Key': 'wrong' } })).status).toBe(403);

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'sdc_http_requests_total{method="GET",route="/upload/*",status="200"}')).toBe(1);
    expect(sample(text, 'sdc_http_requests_total{method="GET",route="/upload/*",status="409"}')).toBe(1);
    expect(sample(text, 'sdc_http_requests_total{method="PUT",route="/store/*",status="200"}')).toBe(1);
    expect(sample(text, 'sdc_http_requests_total{method="GET",route="/download/*",status="302"}')).toBe(1);
    expect(sample(text, 'sdc_http_request_duration_seconds_count{method="GET",route="/download/*"}')).toBe(1);
    expect(sample(text, 'sdc_http_received_bytes_total{route="/store/*"}')).toBeGreaterThanOrEqual(5000);
    expect(sample(text, 'sdc_http_sent_bytes_total{route="/store/*"}')).toBeGreaterThanOrEqual(5000);
    expect(sample(text, 'sdc_uploads_stored_total')).toBe(1);
    expect(sample(text, 'sdc_upload_conflicts_total')).toBe(1);
    expect(sample(text, 'sdc_signature_failures_total')).toBe(1);
    expect(sample(text, 'sdc_api_key_failures_total{reason="missing"}')).toBe(1);
    expect(sample(text, 'sdc_api_key_failures_total{reason="refused"}')).toBe(1);
    expect(sample(text, 'sdc_catalog_files')).toBe(1);
    expect(sample(text, 'sdc_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('says whether the catalog and the store answer, pinging them once for scrapes close together', async () => {
    const catalogPings = vi.spyOn(server.ctx.catalog, 'ping');
    const storePings = vi.spyOn(server.ctx.store, 'ping');
    try {
      for (let i = 0; i < 3; i++) {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        expect(sample(text, 'sdc_dependency_up{dependency="catalog"}')).toBe(1);
        expect(sample(text, 'sdc_dependency_up{dependency="store"}')).toBe(1);
      }
      // The first test's scrape may have checked already: at most one check among these three.
      expect(catalogPings.mock.calls.length).toBeLessThanOrEqual(1);
      expect(storePings.mock.calls.length).toBe(catalogPings.mock.calls.length);
    } finally {
      catalogPings.mockRestore();
      storePings.mockRestore();
    }
  });
});

describe('/metrics of fixity audits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('says how many files are verified, how many failed and how, and how old the oldest verification is', async () => {
    const other = SAMPLE_PATH.replace('v00-01', 'v00-02');
    const never = SAMPLE_PATH.replace('v00-01', 'v00-03');
    for (const path of [SAMPLE_PATH, other, never]) expect((await uploadFile(server.url, path, 'bytes')).status).toBe(200);
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    await server.ctx.catalog.recordFixity(SAMPLE_PATH, hourAgo, 'mismatch');
    await server.ctx.catalog.recordFixity(other, new Date().toISOString(), 'ok');
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(sample(text, 'sdc_fixity_failed_files{fixity="mismatch"}')).toBe(1);
    expect(text).toContain('sdc_fixity_failed_files{fixity="missing"} 0');
    expect(sample(text, 'sdc_fixity_verified_files')).toBe(2);
    expect(sample(text, 'sdc_fixity_never_verified')).toBe(1);
    const age = sample(text, 'sdc_fixity_oldest_verification_age_seconds');
    expect(age).toBeGreaterThanOrEqual(3600);
    expect(age).toBeLessThan(3700);
  });
});
