import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';

/** A fixture of test/fixtures, parsed afresh (tests change their copies). */
export function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

/** The REST API (v1) fixture, aimed at another path and query, as API Gateway would fill it in. */
export function v1Event(path: string, query: Record<string, string[]> = {}, method = 'GET'): APIGatewayProxyEvent {
  const event = fixture<APIGatewayProxyEvent>('apigw-v1-rest-event.json');
  const hasQuery = Object.keys(query).length > 0;
  event.path = path;
  event.httpMethod = method;
  event.pathParameters = { proxy: path.slice(1) };
  event.requestContext.httpMethod = method;
  event.requestContext.path = `/${event.requestContext.stage}${path}`;
  // Single-value form keeps the last value of a repeated name, as API Gateway does.
  event.queryStringParameters = hasQuery ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[v.length - 1]!])) : null;
  event.multiValueQueryStringParameters = hasQuery ? query : null;
  return event;
}

/** Headers added to a v1 event as API Gateway fills them in: in `headers` (last value) and `multiValueHeaders`. */
export function withV1Headers(event: APIGatewayProxyEvent, headers: Record<string, string | string[]>): APIGatewayProxyEvent {
  for (const [name, value] of Object.entries(headers)) {
    const values = [value].flat();
    event.headers[name] = values[values.length - 1];
    event.multiValueHeaders[name] = values;
  }
  return event;
}

/** The HTTP API (v2) fixture, aimed at another path and query; `stage` other than $default prefixes the raw path. */
export function v2Event(path: string, rawQueryString = '', stage = '$default', method = 'GET'): APIGatewayProxyEventV2 {
  const event = fixture<APIGatewayProxyEventV2>('apigw-v2-http-event.json');
  const rawPath = stage === '$default' ? path : `/${stage}${path}`;
  event.rawPath = rawPath;
  event.rawQueryString = rawQueryString;
  event.requestContext.stage = stage;
  event.requestContext.http.method = method;
  event.requestContext.http.path = rawPath;
  event.routeKey = '$default';
  // Repeated names arrive comma-joined in the parsed form.
  const params = new URLSearchParams(rawQueryString);
  event.queryStringParameters = rawQueryString ? Object.fromEntries([...new Set(params.keys())].map((k) => [k, params.getAll(k).join(',')])) : undefined;
  return event;
}

/** An S3 notification for one key, the key URL-encoded as S3 writes it. */
export function s3Notification(encodedKey: string, eventName = 'ObjectCreated:Put'): unknown {
  const event = fixture<{ Records: { eventName: string; s3: { object: { key: string } } }[] }>('s3-notification-put.json');
  event.Records[0]!.eventName = eventName;
  event.Records[0]!.s3.object.key = encodedKey;
  return event;
}

export function eventBridgeEvent(key: string): unknown {
  const event = fixture<{ detail: { object: { key: string } } }>('eventbridge-object-created.json');
  event.detail.object.key = key;
  return event;
}
