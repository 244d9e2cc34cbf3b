import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { FastifyInstance } from 'fastify';
import { ANSWER_TOO_LARGE, ERROR_TEXT_TYPE, errorReply, NOT_STARTED as NOT_STARTED_ERROR, OUT_OF_TIME, raise, type ServerError } from '../errors/index.js';
import { requestFromV1, resultForV1 } from './api-gateway-v1.js';
import { requestFromV2, resultForV2 } from './api-gateway-v2.js';
import { wholeAnswer, type WholeAnswer } from './api-gateway.js';
import { MAX_LAMBDA_RESULT_BYTES } from './collect-body.js';
import { requestTracingFromEnv } from '../tracing/request-tracing.js';
import { buildLambdaApp, lambdaAppTracing } from './lambda-app.js';
import { cachedContext, setupFromEnvironment } from './lambda-context.js';

export type ApiEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyResult | APIGatewayProxyStructuredResultV2;

function isV2(event: ApiEvent): event is APIGatewayProxyEventV2 {
  return (event as { version?: string }).version === '2.0';
}

/** The answer while the container cannot build its app: a setting is wrong, or the catalog or store is out of reach. */
export const NOT_STARTED = NOT_STARTED_ERROR.message();

/** An error answered without the app (there is none yet, or it ran out of time): as http/error-answer.ts renders one. */
function errorAnswer(error: ServerError, headers: Readonly<Record<string, string>> = { 'content-type': ERROR_TEXT_TYPE }, body = (text: string) => text): WholeAnswer {
  const reply = errorReply(error, headers);
  return { statusCode: reply.statusCode, headers: lowerCased(reply.headers), body: Buffer.from(body(reply.body)) };
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Time kept back from the function's timeout, to answer in words rather than be cut off. */
const SAFETY_MS = 1500;

/**
 * API Gateway proxy event (v1 REST API or v2 HTTP API, told apart by `version`) ->
 * `inject` into the server's own Fastify app -> the proxy result. Every route, key check
 * and message is the server's; this adapter only translates. What would otherwise end in
 * API Gateway's bare 502 or 504 is answered in words: a backend that cannot be reached
 * (503, and the next request tries again), an answer over the 6 MB a Lambda answer can carry (400, asking for pages), a
 * request about to run out of the function's time (503).
 */
export function makeApiHandler(app: () => Promise<FastifyInstance>) {
  return async function handle(event: ApiEvent, context?: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>): Promise<ApiResult> {
    const v2 = isV2(event);
    const request = v2 ? requestFromV2(event) : requestFromV1(event);
    let answer: WholeAnswer;
    let instance: FastifyInstance | undefined;
    try {
      instance = await app();
    } catch (err) {
      console.error(JSON.stringify({ level: 'error', msg: 'service could not start', err: String(err), requestId: event.requestContext.requestId }));
      answer = errorAnswer(raise(NOT_STARTED_ERROR, [], { headers: { 'Retry-After': '5' } }));
    }
    if (instance) {
      const remaining = context?.getRemainingTimeInMillis?.();
      let timer: NodeJS.Timeout | undefined;
      const late =
        remaining === undefined
          ? undefined
          : new Promise<WholeAnswer>((resolve) => {
              timer = setTimeout(
                () => resolve(errorAnswer(OUT_OF_TIME.create())),
                Math.max(0, remaining - SAFETY_MS),
              );
            });
      try {
        const injected = instance.inject(request.inject).then((response) => wholeAnswer(response, request));
        answer = await (late ? Promise.race([injected, late]) : injected);
      } finally {
        clearTimeout(timer);
      }
      // The container is frozen once the handler returns: spans left in the buffer would wait for
      // the next invocation, or be lost with the container (docs/deploy.md "Tracing").
      await flushTraces(instance);
    }
    let result = v2 ? resultForV2(answer!) : resultForV1(answer!);
    // The body was capped as it was read; JSON escapes can still push the whole result over.
    if (Buffer.byteLength(JSON.stringify(result)) > MAX_LAMBDA_RESULT_BYTES) {
      // The body a JSON string, as the query's answers are (collect-body.ts).
      const refusal = errorAnswer(ANSWER_TOO_LARGE.create(MAX_LAMBDA_RESULT_BYTES), { 'content-type': 'application/json; charset=utf-8', ...corsOf(answer!) }, JSON.stringify);
      result = v2 ? resultForV2(refusal) : resultForV1(refusal);
    }
    return result;
  };
}

/** Sends the invocation's spans; a receiver out of reach costs the trace, never the answer. */
async function flushTraces(instance: FastifyInstance): Promise<void> {
  const tracing = lambdaAppTracing.get(instance);
  if (!tracing) return;
  // The request span ends in the app's onResponse hook, which runs once the injected answer is done.
  await new Promise((resolve) => setImmediate(resolve));
  await tracing.flush().catch((err: unknown) => console.error(JSON.stringify({ level: 'warn', msg: 'spans not exported', err: String(err) })));
}

/** The CORS and request-id headers of an answer, kept on the one that replaces it. */
function corsOf(answer: WholeAnswer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if ((/^access-control-/.test(name) || name === 'x-request-id' || name === 'vary') && typeof value === 'string') out[name] = value;
  }
  return out;
}

/** The app of this container, built from the environment on the first request. */
export const lambdaAppFromEnvironment = (env: NodeJS.ProcessEnv = process.env) =>
  cachedContext(async () => {
    const { ctx, config, log } = await setupFromEnvironment(env);
    // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set, as for `sdc serve` (docs/deploy.md "Tracing").
    const tracing = await requestTracingFromEnv(env);
    return buildLambdaApp({
      ctx: tracing ? tracing.traced(ctx) : ctx,
      config,
      logger: log,
      tracing,
      onClose: async () => {
        await tracing?.shutdown();
        await ctx.catalog.close();
      },
    });
  });

/** The Lambda entry point: `dist/lambda/api-handler.handler`. */
export const handler = makeApiHandler(lambdaAppFromEnvironment());
