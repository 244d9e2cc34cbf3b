import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { loggerInto } from '../helpers/log-lines.js';
import { SAMPLE_NAME, SAMPLE_PATH, startTestServer } from '../helpers/test-server.js';

interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes: readonly { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}

/** A real OTLP/HTTP receiver: the JSON the exporter posts to /v1/traces, kept. */
async function startReceiver(): Promise<{ url: string; spans: ExportedSpan[]; server: Server }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[] };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

const status = (span: ExportedSpan) => Number(span.attributes.find((a) => a.key === 'http.response.status_code')?.value.intValue);
const hex = (bytes: number) => Array.from({ length: bytes }, (_, i) => ((i * 37 + 11) % 256).toString(16).padStart(2, '0')).join('');

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver();
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
    expect(status(uploadAddress)).toBe(200);
    const put = requestOf(2);
    expect(put.name).toMatch(/^PUT \/store\//);
    expect(status(put)).toBe(200);
    expect(childrenOf(put)).toEqual(expect.arrayContaining(['store.write', 'catalog.insert']));
    const download = requestOf(3);
    expect(download.name).toBe('GET /download/*');
    expect(status(download)).toBe(302);
    expect(childrenOf(download)).toEqual(expect.arrayContaining(['catalog.get', 'store.presignGet']));
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
