import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { MissionConfig } from '../mission/index.js';
import { fileRecordSchema } from './api-schemas.js';
import { REQUEST_ID_HEADER } from './request-id.js';

const PACKAGE = createRequire(import.meta.url)('../../package.json') as { version: string; description: string };

/** The OpenAPI name of a route's wildcard tail (`*` in Fastify). */
const PATH_PARAMETER = 'path';

/** `/upload/*` -> `/upload/{path}`, and the `*` parameter renamed to match. */
export function describedUrl(url: string): string {
  // `:n` as OpenAPI writes it, `{n}` (@fastify/swagger does the same for the document).
  return url.replace(/\*$/, `{${PATH_PARAMETER}}`).replace(/:(\w+)/g, '{$1}');
}

function renameWildcard(schema: FastifySchema): FastifySchema {
  const params = schema.params as { properties?: Record<string, unknown> } | undefined;
  const wildcard = params?.properties?.['*'];
  if (!params || wildcard === undefined) return schema;
  const { '*': _, ...others } = params.properties!;
  return {
    ...schema,
    params: { ...params, properties: { ...others, [PATH_PARAMETER]: wildcard }, required: [PATH_PARAMETER] },
  };
}

interface Responses {
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

/** Every response of every operation carries X-Request-Id (request-id.ts). */
function withRequestIdHeader<T extends { paths?: object }>(document: T): T {
  for (const item of Object.values(document.paths ?? {}) as Record<string, Responses>[]) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        response.headers = {
          ...response.headers,
          [REQUEST_ID_HEADER]: { description: 'Id of the request, as on its lines in the server log.', schema: { type: 'string' } },
        };
      }
    }
  }
  return document;
}

/**
 * The OpenAPI 3.1 description, generated from the route schemas (so it cannot drift
 * from the routes), at `/openapi.json`, and an interactive page at `/docs` whose
 * assets are served from this process (works offline). Called on the root instance
 * before the routes are registered, so that it sees them all.
 */
export async function registerOpenApi(app: FastifyInstance, mission: MissionConfig): Promise<void> {
  app.addSchema(fileRecordSchema(mission));
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: `${mission.name} science data access`,
        version: PACKAGE.version,
        description:
          `${PACKAGE.description}. Two forms of the API: the current form at the root, and the earlier form under /v0 ` +
          '(upload at /v0/upload/science/{path}, query answering one string of Python tuples). All operations of the API are GET; ' +
          'POST /events/s3 takes object-store notifications.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A key from "sdc keys create".' },
          bearer: { type: 'http', scheme: 'bearer', description: "The same key as a bearer token, or an access token of the archive's OpenID Connect provider (SDC_OIDC_ISSUER)." },
        },
      },
      tags: [
        { name: 'current form', description: 'Interface spec section 4.' },
        { name: 'earlier form', description: 'Interface spec, end of 4.3: served under /v0.' },
        { name: 'operations', description: 'For load balancers and operators.' },
        { name: 'sign-in', description: "Sign-in with the institution's OpenID Connect provider (docs/trust.md, Signed-in callers)." },
      ],
    },
    // Shared schemas keep their $id as their name under components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (document) => withRequestIdHeader('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    // A route without a schema (the local store's signed addresses, static assets) is not part of the API.
    transform: ({ schema, url }) => ({ schema: schema ? renameWildcard(schema) : { hide: true }, url: describedUrl(url) }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { access: 'public' } }, async () => app.swagger());
}
