import {
  coverage,
  download,
  downloadEarlierForm,
  query,
  queryEarlierForm,
  upload,
  uploadEarlierForm,
  type Envelope,
  type ServiceContext,
} from '../service/index.js';

/** An API call, whatever carried it (API Gateway v1 or v2). */
export interface ApiRequest {
  readonly method: string;
  /** Decoded path, from the first `/` after any stage prefix. */
  readonly path: string;
  /** Query-string (name, value) pairs, repeats kept. */
  readonly query: readonly (readonly [string, string])[];
  /** The Accept header, which picks the query answer's representation. */
  readonly accept?: string;
  /** The address the client called, for the query's `Link` to its next page. */
  readonly url?: string;
}

type Operation = (ctx: ServiceContext, request: ApiRequest, tail: string) => Envelope | Promise<Envelope>;

/**
 * The operations, by path, as the Fastify routes map them (api-routes.ts,
 * earlier-form-routes.ts, coverage-route.ts): a prefix takes the rest of the path as the
 * file's path; an exact path takes the query string. More specific prefixes first.
 */
const BY_PREFIX: readonly (readonly [string, Operation])[] = [
  ['/upload/science', (ctx, _r, tail) => upload(ctx, tail)],
  ['/upload', (ctx, _r, tail) => upload(ctx, tail)],
  ['/download', (ctx, _r, tail) => download(ctx, tail)],
  ['/v0/upload/science', (ctx, _r, tail) => uploadEarlierForm(ctx, tail)],
  ['/v0/download', (ctx, _r, tail) => downloadEarlierForm(ctx, tail)],
];
const EXACT: Readonly<Record<string, Operation>> = {
  '/query': (ctx, r) => query(ctx, r.query, { accept: r.accept, url: r.url }),
  '/v0/query': (ctx, r) => queryEarlierForm(ctx, r.query, { url: r.url }),
  '/coverage': (ctx, r) => coverage(ctx, r.query),
};

const ENDPOINTS = [...BY_PREFIX.map(([prefix]) => `${prefix}/{path}`), ...Object.keys(EXACT)].map((p) => `GET ${p}`).join(', ');

/** The tail after `prefix`: `` for the bare route, undefined when the path is another one. */
function tail(path: string, prefix: string): string | undefined {
  if (path === prefix) return '';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
}

/** The API's GET operations (the same service functions as the HTTP server's routes). */
export async function routeApiRequest(ctx: ServiceContext, request: ApiRequest): Promise<Envelope> {
  if (request.method === 'GET') {
    const exact = EXACT[request.path];
    if (exact) return exact(ctx, request, '');
    for (const [prefix, operation] of BY_PREFIX) {
      const rest = tail(request.path, prefix);
      if (rest !== undefined) return operation(ctx, request, rest);
    }
  }
  return { statusCode: 404, body: `Not found: ${request.method} ${request.path}. The endpoints are ${ENDPOINTS}.` };
}

/** A header of an API Gateway event, whatever the case of its name (v1 keeps the client's case, v2 lowers it). */
export function header(headers: Readonly<Record<string, string | undefined>> | null | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** `%2F`-style escapes decoded; a malformed escape is kept, so the name check reports it. */
export function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
