import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { baseUrl, encodedBody, encodedPath, header, requestHeaders, type CarriedRequest, type WholeAnswer } from './api-gateway.js';

/**
 * API Gateway HTTP API (payload format 2.0). `rawPath` starts with the stage name unless
 * the stage is `$default`; `rawQueryString` keeps the order and repeats of the query;
 * repeated headers arrive comma-joined, cookies in `cookies`.
 */
export function requestFromV2(event: APIGatewayProxyEventV2): CarriedRequest {
  const stage = event.requestContext.stage;
  let path = event.rawPath;
  let prefix = '';
  if (stage && stage !== '$default' && (path === `/${stage}` || path.startsWith(`/${stage}/`))) {
    prefix = `/${stage}`;
    path = path.slice(prefix.length) || '/';
  }
  const headers = requestHeaders(Object.entries(event.headers ?? {}).map(([name, value]) => [name, value === undefined ? [] : [value]] as const));
  if (event.cookies && event.cookies.length > 0) headers.cookie = event.cookies.join('; ');
  const host = header(event.headers, 'host') ?? event.requestContext.domainName;
  headers.host = host;
  return {
    inject: {
      method: event.requestContext.http.method as 'GET',
      url: `${encodedPath(path)}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`,
      headers,
      remoteAddress: event.requestContext.http.sourceIp,
      ...(event.body === undefined ? {} : { payload: event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body }),
    },
    clientBase: baseUrl(header(event.headers, 'x-forwarded-proto'), event.requestContext.domainName, prefix),
  };
}

/** v2 answers: repeated headers comma-joined, except Set-Cookie, which goes to `cookies`. */
export function resultForV2(answer: WholeAnswer): APIGatewayProxyStructuredResultV2 {
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(answer.headers)) {
    if (name === 'set-cookie') cookies = typeof value === 'string' ? [value] : [...value];
    else headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return { statusCode: answer.statusCode, headers, ...(cookies ? { cookies } : {}), ...encodedBody(answer) };
}
