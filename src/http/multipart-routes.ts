import type { FastifyInstance, FastifyRequest } from 'fastify';
import { abortMultipart, completeMultipart, multipartAddresses, startMultipart, type ServiceContext } from '../service/index.js';
import { INVALID_MULTIPART_REQUEST } from '../errors/index.js';
import { failure } from '../service/index.js';
import { envelopeRoute, pathParam } from './envelope-route.js';

interface MultipartQuery {
  uploadId?: string;
  parts?: string;
  size?: string;
  /** At opening: the whole file's declared SHA-256 (docs/api.md, "Checked transfers"). */
  sha256?: string;
}

const uploadIdMissing = () => failure(INVALID_MULTIPART_REQUEST.create('uploadId: the id POST /uploads/{path} answered.'));

/**
 * Uploads in parts (docs/api.md "Large files"), under the `upload` access class like GET /upload:
 * `POST /uploads/{path}` opens one (with `?uploadId=`, completes it), `GET` hands out part
 * addresses and lists the parts stored, `DELETE` aborts.
 */
export function multipartRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    const options = { config: { access: 'upload' }, schema: { hide: true } } as const;
    const query = (request: FastifyRequest) => request.query as MultipartQuery;

    app.post(
      '/uploads/*',
      options,
      envelopeRoute(ctx, (c, request) => {
        const { uploadId, size, sha256 } = query(request);
        if (uploadId !== undefined) return completeMultipart(c, pathParam(request), uploadId, request.body, request.apiKeyName);
        if (size !== undefined && !/^\d{1,16}$/.test(size)) return failure(INVALID_MULTIPART_REQUEST.create("size: the file's size in bytes."));
        return startMultipart(c, pathParam(request), request.apiKeyName, size === undefined ? undefined : Number(size), sha256);
      }),
    );
    app.get(
      '/uploads/*',
      options,
      envelopeRoute(ctx, (c, request) => {
        const { uploadId, parts } = query(request);
        return uploadId === undefined ? uploadIdMissing() : multipartAddresses(c, pathParam(request), uploadId, parts, request.apiKeyName);
      }),
    );
    app.delete(
      '/uploads/*',
      options,
      envelopeRoute(ctx, (c, request) => {
        const { uploadId } = query(request);
        return uploadId === undefined ? uploadIdMissing() : abortMultipart(c, pathParam(request), uploadId, request.apiKeyName);
      }),
    );
  };
}
