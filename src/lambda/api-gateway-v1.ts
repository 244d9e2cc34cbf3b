import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { baseUrl, encodedBody, encodedPath, header, requestHeaders, type CarriedRequest, type WholeAnswer } from './api-gateway.js';

/**
 * API Gateway REST API (v1) proxy integration, also HTTP API with payload format 1.0.
 * `path` is the resource path without the stage; `requestContext.path` is what the
 * client called (stage included). Repeated query names and headers arrive in full only
 * in the `multiValue*` fields.
 */
export function requestFromV1(event: APIGatewayProxyEvent): CarriedRequest {
  const query = new URLSearchParams();
  const multi = event.multiValueQueryStringParameters;
  if (multi) {
    for (const [name, values] of Object.entries(multi)) for (const value of values ?? []) query.append(name, value);
  } else {
    for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) query.append(name, value ?? '');
  }
  const search = query.toString();
  const headers = requestHeaders(
    event.multiValueHeaders && Object.keys(event.multiValueHeaders).length > 0
      ? Object.entries(event.multiValueHeaders).map(([name, values]) => [name, values ?? []] as const)
      : Object.entries(event.headers ?? {}).map(([name, value]) => [name, value === undefined ? [] : [value]] as const),
  );
  const host = header(event.headers, 'host') ?? event.requestContext.domainName ?? 'localhost';
  headers.host = host;
  const calledPath = event.requestContext.path ?? event.path;
  const prefix = calledPath.endsWith(event.path) ? calledPath.slice(0, calledPath.length - event.path.length) : '';
  return {
    inject: {
      method: event.httpMethod as 'GET',
      url: `${encodedPath(event.path)}${search ? `?${search}` : ''}`,
      headers,
      remoteAddress: event.requestContext.identity?.sourceIp,
      ...(event.body == null ? {} : { payload: event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body }),
    },
    clientBase: baseUrl(header(event.headers, 'x-forwarded-proto'), event.requestContext.domainName ?? host, prefix.replace(/\/$/, '')),
  };
}

/** v1 answers: single values in `headers`, repeated ones (Set-Cookie) in `multiValueHeaders`. */
export function resultForV1(answer: WholeAnswer): APIGatewayProxyResult {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (typeof value === 'string') headers[name] = value;
    else multiValueHeaders[name] = [...value];
  }
  return {
    statusCode: answer.statusCode,
    headers,
    ...(Object.keys(multiValueHeaders).length > 0 ? { multiValueHeaders } : {}),
    ...encodedBody(answer),
  };
}
