import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes: readonly { key: string; value: { stringValue?: string; intValue?: number | string } }[];
}

export interface OtlpReceiver {
  readonly url: string;
  /** Every span posted so far, in arrival order. */
  readonly spans: ExportedSpan[];
  readonly server: Server;
}

/** A real OTLP/HTTP receiver: the JSON the exporter posts to /v1/traces, kept. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
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

/** A span's `http.response.status_code`. */
export const statusOf = (span: ExportedSpan) => Number(span.attributes.find((a) => a.key === 'http.response.status_code')?.value.intValue);
