import type { FastifyInstance } from 'fastify';
import type { FastifyRequest } from 'fastify';
import { download, query, upload, withdraw, type ServiceContext, type WithdrawnAccess } from '../service/index.js';
import { downloadSchema, uploadSchema, withdrawSchema } from './api-schemas.js';
import { querySchema } from './query-schemas.js';
import { envelopeRoute, pathParam, queryInfo, queryPairs, sha256Param } from './envelope-route.js';
import { callerOf } from './caller.js';

export { queryPairs } from './envelope-route.js';

/**
 * The three endpoints (docs/api.md, The three endpoints), current form, at the root; and the earlier
 * form's upload address `/upload/science/{path}` as an alias (docs/api.md, The two forms), since it
 * collides with nothing. `/download/` takes a bare file name as it is.
 */
export function apiRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    const uploadRoute = envelopeRoute(ctx, (c, request) => upload(c, pathParam(request), request.apiKeyName, sha256Param(request)));
    const downloadRoute = envelopeRoute(ctx, (c, request) => download(c, pathParam(request), withdrawnAccess(request), callerOf(request)));
    const withdrawRoute = envelopeRoute(ctx, (c, request) => withdraw(c, pathParam(request), request.body, request.apiKeyName ?? ''));
    // Who may call each route (route-access.ts); the schemas' 400s come from the operations.
    const uploadOptions = { attachValidation: true, config: { access: 'upload' } } as const;
    const readOptions = { attachValidation: true, config: { access: 'read' } } as const;

    app.get('/upload/*', { ...uploadOptions, schema: uploadSchema(ctx.mission, 'current') }, uploadRoute);
    app.get(
      '/upload/science/*',
      {
        ...uploadOptions,
        schema: {
          ...uploadSchema(ctx.mission, 'current'),
          operationId: 'uploadScience',
          summary: 'Alias of /upload/{path} (the earlier form\'s address)',
        },
      },
      uploadRoute,
    );
    app.get('/download/*', { ...readOptions, schema: downloadSchema(ctx.mission, 'current') }, downloadRoute);
    app.get(
      '/query',
      { ...readOptions, schema: querySchema(ctx.mission, 'current') },
      envelopeRoute(ctx, (c, request) => query(c, queryPairs(request.url), queryInfo(request))),
    );

    // Corrections (docs/api.md "Withdrawn files"): a curator key only (route-access.ts).
    const curatorOptions = { attachValidation: true, config: { access: 'curator' } } as const;
    app.post('/withdraw/*', { ...curatorOptions, schema: withdrawSchema(ctx.mission) }, withdrawRoute);
    app.post('/withdraw', { ...curatorOptions, schema: { hide: true } }, withdrawRoute);

    // No path at all: answered by the same operations (400), left out of the description.
    app.get('/upload', { ...uploadOptions, schema: { hide: true } }, uploadRoute);
    app.get('/download', { ...readOptions, schema: { hide: true } }, downloadRoute);
  };
}

/** `?withdrawn=include`, and whether the request's key is a curator's (docs/api.md "Withdrawn files"). */
export function withdrawnAccess(request: FastifyRequest): WithdrawnAccess {
  const include = queryPairs(request.url).some(([name, value]) => name === 'withdrawn' && value === 'include');
  return include ? { include, curator: request.apiKeyRole === 'curator' } : {};
}
