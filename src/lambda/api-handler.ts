import type { APIGatewayProxyEvent, APIGatewayProxyEventV2, APIGatewayProxyResult, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { renderEnvelope } from '../http/envelope-render.js';
import type { ServiceContext } from '../service/index.js';
import { requestFromV1, resultForV1 } from './api-gateway-v1.js';
import { requestFromV2, resultForV2 } from './api-gateway-v2.js';
import { routeApiRequest } from './api-request.js';
import { collectBody, MAX_LAMBDA_BODY_BYTES } from './collect-body.js';
import { cachedContext, contextFromEnvironment } from './lambda-context.js';

export type ApiEvent = APIGatewayProxyEvent | APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyResult | APIGatewayProxyStructuredResultV2;

function isV2(event: ApiEvent): event is APIGatewayProxyEventV2 {
  return (event as { version?: string }).version === '2.0';
}

/**
 * API Gateway proxy event -> the service's operation -> envelope -> the proxy
 * result, rendered by the same rule as the HTTP server. v1 (REST API) and v2
 * (HTTP API) events are told apart by `version`.
 */
export function makeApiHandler(context: () => Promise<ServiceContext>, maxBodyBytes = MAX_LAMBDA_BODY_BYTES) {
  return async function handle(event: ApiEvent): Promise<ApiResult> {
    const ctx = await context();
    const request = isV2(event) ? requestFromV2(event) : requestFromV1(event);
    let answer;
    try {
      answer = await collectBody(renderEnvelope(await routeApiRequest(ctx, request)), maxBodyBytes);
    } catch (err) {
      // As the HTTP server does: the details go to the log, never to the caller.
      const id = event.requestContext.requestId;
      ctx.log.error({ err, requestId: id }, 'request failed');
      answer = { statusCode: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `Internal error (request ${id}).` };
    }
    return isV2(event) ? resultForV2(answer) : resultForV1(answer);
  };
}

/** The Lambda entry point: `dist/lambda/api-handler.handler`. */
export const handler = makeApiHandler(cachedContext(() => contextFromEnvironment()));
