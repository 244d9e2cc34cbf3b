import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaAppFromEnvironment, makeApiHandler, type ApiEvent } from '../../src/lambda/api-handler.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startOtlpReceiver, statusOf, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { v2Event } from './lambda-events.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (parent: string) => `00-${TRACE_ID}-${parent}-01`;
const PATH = 'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';

// docs/deploy.md "Tracing": the Lambda carrier continues the caller's trace as `sdc serve` does,
// and its spans have reached the receiver when the invocation returns (the container may be
// frozen right after, with nothing left to send them).
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(`Lambda traces (${PRODUCTION_BACKENDS_LABEL})`, () => {
  let backends: ProductionBackends;
  let receiver: OtlpReceiver;
  let app: ReturnType<typeof lambdaAppFromEnvironment>;
  let handle: (event: ApiEvent) => Promise<APIGatewayProxyResultV2>;

  beforeAll(async () => {
    backends = await startProductionBackends();
    receiver = await startOtlpReceiver();
    // The exporter reads its endpoint from the process's environment, as on Lambda.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    app = lambdaAppFromEnvironment({ ...backends.settings, SDC_STORE: backends.settings.store, SDC_CATALOG: backends.settings.catalog, SDC_LOG_LEVEL: 'silent', SDC_REQUIRE_KEYS: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    handle = makeApiHandler(app) as typeof handle;
  });
  afterAll(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    if (app) await (await app()).close();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await backends?.stop();
  });

  it('a span per invocation, child of the traceparent, the catalog call under it, exported before the handler returns', async () => {
    const event = v2Event(`/upload/${PATH}`);
    event.headers = { ...event.headers, traceparent: traceparent('00f067aa0ba902b7') };
    const answer = await handle(event);
    expect(typeof answer === 'object' && answer.statusCode).toBe(200);

    // No waiting: what the handler sent before returning is all a frozen container ever sends.
    const spans = receiver.spans.filter((s) => s.traceId === TRACE_ID);
    const request = spans.find((s) => s.parentSpanId === '00f067aa0ba902b7');
    expect(request?.name).toBe('GET /upload/*');
    expect(statusOf(request!)).toBe(200);
    const children = spans.filter((s) => s.parentSpanId === request!.spanId).map((s) => s.name);
    expect(children.some((name) => name.startsWith('catalog.'))).toBe(true);
  });

  it('without a traceparent, starts a trace of its own', async () => {
    const before = receiver.spans.length;
    const answer = await handle(v2Event('/query', 'instrument=swe'));
    expect(typeof answer === 'object' && answer.statusCode).toBe(200);
    const added = receiver.spans.slice(before);
    const request = added.find((s) => s.name === 'GET /query');
    expect(request).toBeDefined();
    expect(request!.traceId).not.toBe(TRACE_ID);
    expect(request!.parentSpanId ?? '').toBe('');
  });
});
