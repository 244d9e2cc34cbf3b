import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describedUrl } from './openapi.js';
import { METHOD_NOT_ALLOWED, raise, ROUTE_NOT_FOUND } from '../errors/index.js';
import { redactUrl } from '../redact-url.js';
import { sendError } from './error-answer.js';

/** Methods that get a 405 (rather than a 404) on a URL that exists for other methods. */
const OTHER_METHODS = ['DELETE', 'PATCH', 'POST', 'PUT'] as const;

/**
 * Answers for requests no route takes: 404 listing the endpoints, and 405 with `Allow`
 * for a known URL asked with a method it does not serve. Both are built from the route
 * table as registered, so they never disagree with the routes. Call `watch` before the
 * routes are registered and `answer` after.
 */
export function unmatchedRoutes(app: FastifyInstance) {
  const methodsByUrl = new Map<string, Set<string>>();
  const endpoints: string[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || (route.config as { methodNotAllowed?: boolean } | undefined)?.methodNotAllowed) return;
    const methods = [route.method].flat().map(String);
    const known = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method);
    methodsByUrl.set(route.url, known);
    const schema = route.schema as { hide?: boolean } | undefined;
    if (schema && !schema.hide && !methods.includes('HEAD')) endpoints.push(`${methods.join(', ')} ${describedUrl(route.url)}`);
  });

  return {
    answer(): void {
      for (const [url, known] of methodsByUrl) {
        const missing = OTHER_METHODS.filter((method) => !known.has(method));
        if (missing.length === 0) continue;
        const allow = [...known, 'OPTIONS'].sort().join(', ');
        app.route({
          method: missing,
          url,
          schema: { hide: true },
          // Answers only which methods exist: nothing anyone may not know.
          config: { methodNotAllowed: true, access: 'public' } as object,
          // Before the body is parsed: the method alone decides.
          onRequest: async (request: FastifyRequest, reply: FastifyReply) =>
            sendError(reply, raise(METHOD_NOT_ALLOWED, [request.method, pathOf(request), allow], { headers: { Allow: allow } })),
          handler: async () => undefined,
        });
      }
      app.setNotFoundHandler((request, reply) => sendError(reply, ROUTE_NOT_FOUND.create(request.method, pathOf(request), endpoints)));
    },
  };
}

function pathOf(request: FastifyRequest): string {
  return redactUrl(request.url).split('?')[0]!;
}
