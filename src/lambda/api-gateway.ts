import type { InjectOptions, LightMyRequestResponse as InjectResponse } from 'fastify';

/**
 * An API Gateway request, as the Fastify app takes it (`inject`), and what the adapter
 * needs to put the answer back in the client's terms.
 */
export interface CarriedRequest {
  readonly inject: InjectOptions;
  /**
   * The base the client called, e.g. `https://abc.execute-api.us-west-2.amazonaws.com/prod`:
   * the app sees the path without the stage, so addresses it builds from the request
   * (a query's Link to its next page) are put back under this base.
   */
  readonly clientBase: string;
}

/** A whole answer, headers as the app set them (lower-case names). */
export interface WholeAnswer {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: Buffer;
}

/** A header of an API Gateway event, whatever the case of its name (v1 keeps the client's case, v2 lowers it). */
export function header(headers: Readonly<Record<string, string | undefined>> | null | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/**
 * A path as API Gateway gives it, percent-encoded for the app. Whether the gateway
 * decoded it or not, decoding first and encoding again gives the same address, so a
 * `%2F` or a space reaches the app's routes as it would reach `sdc serve`. A path that
 * is not valid percent-encoding is passed on as it came, so the app gives its 400.
 */
export function encodedPath(path: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return path;
  }
  return encodeURI(decoded).replace(/[?#]/g, (c) => encodeURIComponent(c));
}

/** Headers the gateway computes or that belong to one connection: not passed on either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'proxy-connection']);

/** Request headers for `inject`: repeated names joined as HTTP joins them (cookies with `; `). */
export function requestHeaders(entries: Iterable<readonly [string, readonly string[]]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of entries) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || values.length === 0) continue;
    out[lower] = values.join(lower === 'cookie' ? '; ' : ', ');
  }
  return out;
}

/** Text bodies go to API Gateway as they are; anything else (images, fonts, octets) in base64. */
function isTextual(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml|javascript|yaml|x-ndjson|problem\+json)$/.test(type) ||
    type === 'image/svg+xml'
  );
}

/** The answer `inject` gave, as a whole answer with the client's addresses. */
export function wholeAnswer(response: InjectResponse, request: CarriedRequest): WholeAnswer {
  const headers: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  const link = headers.link;
  // The app writes a relative link unless SDC_PUBLIC_URL is set: resolve it against the
  // address the gateway says the client called (its own domain name and stage, not a header).
  if (typeof link === 'string') headers.link = link.replace(/^<\//, `<${request.clientBase}/`);
  return { statusCode: response.statusCode, headers, body: response.rawPayload };
}

/** The body as API Gateway takes it. */
export function encodedBody(answer: WholeAnswer): { body: string; isBase64Encoded: boolean } {
  const type = answer.headers['content-type'];
  const textual = isTextual(typeof type === 'string' ? type : undefined);
  return textual ? { body: answer.body.toString('utf8'), isBase64Encoded: false } : { body: answer.body.toString('base64'), isBase64Encoded: true };
}

/** The client's base: scheme as the gateway saw it (always https on AWS), host, and the stage or mapping prefix. */
export function baseUrl(proto: string | undefined, host: string, prefix: string): string {
  return `${proto ?? 'https'}://${host}${prefix}`;
}
