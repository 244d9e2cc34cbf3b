import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** SDC_PUBLIC_URL without its trailing slash, or undefined: the base of links the server writes. */
    publicUrl: string | undefined;
  }
}

/**
 * The address, for a link the server writes (the next page's `Link`), of the request's own
 * path and query: under the configured public URL (SDC_PUBLIC_URL) when there is one, else
 * relative (`/query?...`, resolved by the client against the address it called). Never built
 * from `Host`: a client chooses that header, and a shared cache would hand its link to everyone
 * (docs/trust.md "Links"). Only the path and query of the request line are kept, so an
 * absolute-form or `//host` request line names no other host either.
 */
export function linkToRequest(request: FastifyRequest): string {
  const parsed = new URL(request.url, 'http://relative.invalid');
  // A path that began `//` would read as another host once relative.
  const own = `${parsed.pathname.replace(/^\/+/, '/')}${parsed.search}`;
  const base = request.server.publicUrl;
  return base === undefined ? own : `${base}${own}`;
}
