import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { decodePath, header, type ApiRequest } from './api-request.js';

/**
 * API Gateway HTTP API (payload format 2.0). `rawPath` is as sent, still encoded,
 * and starts with the stage name unless the stage is `$default`; `rawQueryString`
 * keeps the order and repeats of the query.
 */
export function requestFromV2(event: APIGatewayProxyEventV2): ApiRequest {
  const stage = event.requestContext.stage;
  let path = event.rawPath;
  if (stage && stage !== '$default' && (path === `/${stage}` || path.startsWith(`/${stage}/`))) path = path.slice(stage.length + 1) || '/';
  return {
    method: event.requestContext.http.method,
    path: decodePath(path),
    query: [...new URLSearchParams(event.rawQueryString ?? '')],
    accept: header(event.headers, 'accept'),
    url: `https://${event.requestContext.domainName}${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`,
  };
}

export function resultForV2(answer: { statusCode: number; headers: Record<string, string>; body: string }): APIGatewayProxyStructuredResultV2 {
  return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body, isBase64Encoded: false };
}
