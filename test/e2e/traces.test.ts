import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { loggerInto } from '../helpers/log-lines.js';
import { startOtlpReceiver, statusOf, type ExportedSpan, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer } from '../helpers/test-server.js';

const hex = (bytes: number) => Array.from({ length: bytes }, (_, i) => ((i * 37 + 11) % 256).toString(16).padStart(2, '0')).join('');

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  });
  afterEach(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.TRACEPARENT;
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  it('a span per request, named by its route, child of the traceparent sent, with the catalog and store calls under it; the trace id in the access line', async () => {
    const traceId = hex(16);
    const parent = (n: number) => `${n.toString(16).padStart(16, '0')}`;
    const traceparent = (n: number) => `00-${traceId}-${parent(n)}-01`;
    const lines: string[] = [];
    const server = await startTestServer({}, {}, loggerInto(lines));
    try {
      const address = (await (await fetch(`${server.url}/upload/${SAMPLE_PATH}`, { headers: { traceparent: traceparent(1) } })).json()) as string;
      expect((await fetch(address, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '', traceparent: traceparent(2) } })).status).toBe(200);
      const location = (await fetch(`${server.url}/download/${SAMPLE_NAME}`, { redirect: 'manual', headers: { traceparent: traceparent(3) } })).headers.get('location')!;
      expect(await (await fetch(location, { headers: { traceparent: traceparent(4) } })).text()).toBe('bytes');
    } finally {
      await server.stop(); // flushes the spans
    }
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const requestOf = (n: number) => {
      const found = spans.filter((s) => s.parentSpanId === parent(n));
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const childrenOf = (span: ExportedSpan) => spans.filter((s) => s.parentSpanId === span.spanId).map((s) => s.name);

    const uploadAddress = requestOf(1);
    expect(uploadAddress.name).toBe('GET /upload/*');
    expect(statusOf(uploadAddress)).toBe(200);
    const put = requestOf(2);
    expect(put.name).toMatch(/^PUT \/store\//);
    expect(statusOf(put)).toBe(200);
    expect(childrenOf(put)).toEqual(expect.arrayContaining(['store.write', 'catalog.insert']));
    const download = requestOf(3);
    expect(download.name).toBe('GET /download/*');
    expect(statusOf(download)).toBe(302);
    // The record's deciding fields only (servable.ts, SERVING_FIELDS): catalog.getFields, not catalog.get.
    expect(childrenOf(download)).toEqual(expect.arrayContaining(['catalog.getFields', 'store.presignGet']));
    const get = requestOf(4);
    expect(childrenOf(get)).toEqual(expect.arrayContaining([expect.stringMatching(/^store\./)]));
    expect(childrenOf(uploadAddress)).toEqual(expect.arrayContaining(['store.presignPut']));

    const accessLines = lines.map((l) => JSON.parse(l) as { msg: string; traceId?: string; req?: { url: string } }).filter((e) => e.msg === 'request');
    expect(accessLines).toHaveLength(4);
    expect(accessLines.every((e) => e.traceId === traceId)).toBe(true);
  });

  it('the sdc client sends a traceparent: its requests are one trace, the caller\'s when TRACEPARENT is set', async () => {
    const traceId = hex(16).split('').reverse().join('');
    process.env.TRACEPARENT = `00-${traceId}-${'1'.repeat(16)}-01`;
    const server = await startTestServer();
    const work = await mkdtemp(join(tmpdir(), 'sdc-traces-'));
    try {
      const client = new Client({ url: server.url });
      const dataDir = join(work, 'up');
      await mkdir(dirname(join(dataDir, SAMPLE_PATH)), { recursive: true });
      await writeFile(join(dataDir, SAMPLE_PATH), 'traced bytes');
      await client.upload(join(dataDir, SAMPLE_PATH), { dataDir });
      await client.download(SAMPLE_NAME, { dest: join(work, 'down') });
      await client.close();
    } finally {
      await server.stop();
      await rm(work, { recursive: true, force: true });
    }
    const ids = new Set(receiver.spans.map((s) => s.spanId));
    // The client's requests: spans of its trace whose parent is the client's (not exported here).
    const requests = receiver.spans.filter((s) => s.traceId === traceId && s.parentSpanId && !ids.has(s.parentSpanId));
    const names = requests.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['GET /upload/*', 'GET /download/*']));
    expect(names.some((n) => n.startsWith('PUT /store/'))).toBe(true);
    expect(new Set(requests.map((s) => s.parentSpanId)).size).toBe(requests.length);
  });

  it('off without OTEL_EXPORTER_OTLP_ENDPOINT: nothing exported, the access line still carries the traceparent\'s trace id', async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const traceId = hex(16).replace(/^../, 'ab');
    const lines: string[] = [];
    const server = await startTestServer({}, {}, loggerInto(lines));
    try {
      expect((await fetch(`${server.url}/query`, { headers: { traceparent: `00-${traceId}-${'2'.repeat(16)}-01` } })).status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(receiver.spans).toEqual([]);
    const access = lines.map((l) => JSON.parse(l) as { msg: string; traceId?: string }).filter((e) => e.msg === 'request');
    expect(access.map((e) => e.traceId)).toEqual([traceId]);
  });
});
