import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { decodePath, header, type ApiRequest } from './api-request.js';

/**
 * API Gateway REST API (v1) proxy integration, also HTTP API with payload format
 * 1.0. `path` is the resource path without the stage; repeated query names arrive
 * only in `multiValueQueryStringParameters`.
 */
export function requestFromV1(event: APIGatewayProxyEvent): ApiRequest {
  const query: [string, string][] = [];
  const multi = event.multiValueQueryStringParameters;
  if (multi) {
    for (const [name, values] of Object.entries(multi)) for (const value of values ?? []) query.push([name, value]);
  } else {
    for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) query.push([name, value ?? '']);
  }
  const search = new URLSearchParams(query).toString();
  return {
    method: event.httpMethod,
    path: decodePath(event.path),
    query,
    accept: header(event.headers, 'accept'),
    // requestContext.path is the path the client called, stage included.
    url: `https://${event.requestContext.domainName ?? header(event.headers, 'host')}${event.requestContext.path}${search ? `?${search}` : ''}`,
  };
}

export function resultForV1(answer: { statusCode: number; headers: Record<string, string>; body: string }): APIGatewayProxyResult {
  return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body, isBase64Encoded: false };
}
