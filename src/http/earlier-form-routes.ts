import type { FastifyInstance } from 'fastify';
import { downloadEarlierForm, queryEarlierForm, uploadEarlierForm, type ServiceContext } from '../service/index.js';
import { downloadSchema, uploadSchema } from './api-schemas.js';
import { querySchema } from './query-schemas.js';
import { envelopeRoute, pathParam, queryInfo, queryPairs } from './envelope-route.js';
import { callerOf } from './caller.js';

/**
 * The earlier form of the API (docs/api.md, Earlier form (`/v0`)), registered under
 * the prefix `/v0`: the same operations, re-presented by src/service/earlier-form.ts.
 */
export function earlierFormRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    const uploadOptions = { attachValidation: true, config: { access: 'upload' } } as const;
    const readOptions = { attachValidation: true, config: { access: 'read' } } as const;
    const uploadRoute = envelopeRoute(ctx, (c, request) => uploadEarlierForm(c, pathParam(request), request.apiKeyName));
    const downloadRoute = envelopeRoute(ctx, (c, request) => downloadEarlierForm(c, pathParam(request), callerOf(request)));

    app.get('/upload/science/*', { ...uploadOptions, schema: uploadSchema(ctx.mission, 'earlier') }, uploadRoute);
    app.get('/download/*', { ...readOptions, schema: downloadSchema(ctx.mission, 'earlier') }, downloadRoute);
    app.get(
      '/query',
      { ...readOptions, schema: querySchema(ctx.mission, 'earlier') },
      envelopeRoute(ctx, (c, request) => queryEarlierForm(c, queryPairs(request.url), queryInfo(request))),
    );

    app.get('/upload/science', { ...uploadOptions, schema: { hide: true } }, uploadRoute);
    app.get('/download', { ...readOptions, schema: { hide: true } }, downloadRoute);
  };
}
