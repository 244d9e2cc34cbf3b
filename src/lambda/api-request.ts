import { download, query, upload, type Envelope, type ServiceContext } from '../service/index.js';

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

const ENDPOINTS = 'GET /upload/{path}, GET /download/{path}, GET /query?<parameters>';

/** The tail after `/upload` or `/download`: `` for the bare route, undefined when the path is another one. */
function tail(path: string, prefix: string): string | undefined {
  if (path === prefix) return '';
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
}

/** The three endpoints of interface spec 4 (current form), as the Fastify routes map them, to the same operations. */
export async function routeApiRequest(ctx: ServiceContext, request: ApiRequest): Promise<Envelope> {
  if (request.method === 'GET') {
    const uploadPath = tail(request.path, '/upload');
    if (uploadPath !== undefined) return upload(ctx, uploadPath);
    const downloadPath = tail(request.path, '/download');
    if (downloadPath !== undefined) return download(ctx, downloadPath);
    if (request.path === '/query') return query(ctx, request.query, { accept: request.accept, url: request.url });
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
