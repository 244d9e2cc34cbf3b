import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { ALREADY_EXISTS, DIGEST_MISMATCH, FILE_NOT_FOUND, NOT_A_STORED_PATH, ServerError, SIGNATURE_EXPIRED, SIGNATURE_MISMATCH } from '../errors/index.js';
import { ingest, recordedName, servableTo, SIGNED, type ServiceContext } from '../service/index.js';
import { isOutOfSpace, lowSpaceRefusal, OutOfSpaceError } from '../service/out-of-space.js';
import { exampleStoredPath, resolveRequestPath } from '../mission/index.js';
import { sendError } from './error-answer.js';
import { replyWithStoredFile } from './stored-file-reply.js';
import type { LocalObjectStore, UrlSigner } from '../store/index.js';
import { signatureVerdict, type StoreQuery } from './store-signatures.js';

export { validlySigned } from './store-signatures.js';

/**
 * The local store's own signed addresses: `PUT /store/<key>` stores bytes (then
 * indexes them), `GET|HEAD /store/<key>` serves them with Range, ETag and
 * Last-Modified. Only a valid, unexpired signature for that method and key opens them.
 */
export function storeRoutes(ctx: ServiceContext, store: LocalObjectStore, signer: UrlSigner) {
  return async function (app: FastifyInstance): Promise<void> {
    // Take the body as a raw stream, whatever its Content-Type (an empty one included).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    // Real clients PUT with `Content-Type: ''`; Fastify would answer 415 to an empty
    // media type, so treat it as absent.
    app.addHook('onRequest', async (request) => {
      if (request.headers['content-type']?.trim() === '') delete request.headers['content-type'];
    });

    /**
     * A refusal sent before the request body was read: close the connection after it,
     * so the unread bytes are dropped instead of holding the socket.
     */
    const refuse = (request: FastifyRequest, reply: FastifyReply, error: ServerError): FastifyReply => {
      if (!request.raw.complete) reply.header('Connection', 'close');
      return sendError(reply, error);
    };

    /** The key the address names, once its signature is checked; else the reply is sent. */
    const authorize = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
      const key = (request.params as Record<string, string>)['*'] ?? '';
      const verdict = signatureVerdict(signer, request);
      if (verdict !== 'valid') {
        void refuse(request, reply, verdict === 'expired' ? SIGNATURE_EXPIRED.create() : SIGNATURE_MISMATCH.create());
        return undefined;
      }
      // Signed addresses are only ever made for canonical keys; refuse anything else anyway.
      const resolved = resolveRequestPath(key, ctx.mission);
      if (resolved.kind !== 'file' || resolved.path !== key) {
        void refuse(request, reply, NOT_A_STORED_PATH.create(key));
        return undefined;
      }
      return key;
    };

    /** Removes a stored file whose record could not be written, unless a record of it appeared meanwhile. */
    const unstore = async (key: string, log: FastifyBaseLogger): Promise<void> => {
      try {
        if (await ctx.catalog.has(key)) return;
        await store.remove(key);
        log.warn({ file_path: key }, 'record not written: stored file removed again');
      } catch (err) {
        // Left for the reconcile that runs at every start to index.
        log.error({ err, file_path: key }, 'record not written, and the stored file could not be removed');
      }
    };

    /** PUT of one part of a multipart upload: stored with the upload, answered with its ETag. */
    const putPart = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const key = (request.params as Record<string, string>)['*'] ?? '';
      const { uploadId = '', partNumber = '' } = request.query as StoreQuery;
      const verdict = signatureVerdict(signer, request);
      if (verdict !== 'valid') {
        return refuse(request, reply, verdict === 'expired' ? SIGNATURE_EXPIRED.create() : SIGNATURE_MISMATCH.create());
      }
      const body = (request.body as Readable | undefined) ?? request.raw;
      const etag = await store.multipart.writePart(key, uploadId, Number(partNumber), body).catch((err: unknown) => {
        throw isOutOfSpace(err) ? new OutOfSpaceError(key, err) : err;
      });
      return reply.code(200).header('ETag', `"${etag}"`).send();
    };

    app.put('/store/*', { config: { access: 'signed' } }, async (request, reply) => {
      if ((request.query as StoreQuery).uploadId !== undefined) return putPart(request, reply);
      const key = authorize(request, reply);
      if (key === undefined) return reply;
      // An address handed out before the store ran short is refused too: a new file, not yet begun.
      const lowSpace = lowSpaceRefusal(store, key);
      if (lowSpace) return refuse(request, reply, lowSpace);
      // The name check of every upload (recorded-name.ts), as at the completion of an upload in
      // parts: a recorded name never takes bytes again. Left to the store's write is the one PUT
      // that may meet its name's record, the retry of its own upload whose answer was lost.
      const taken = await recordedName(ctx, key);
      if (taken && (taken.code !== ALREADY_EXISTS.code || !store.head(key))) return refuse(request, reply, taken);
      const body = (request.body as Readable | undefined) ?? request.raw;
      const { uploader, sha256: declared } = request.query as StoreQuery;
      const result = await store.write(key, body, uploader, declared).catch((err: unknown) => {
        // The temporary file is gone already (the store's write removes it on any failure).
        throw isOutOfSpace(err) ? new OutOfSpaceError(key, err) : err;
      });
      if (result.status === 'exists') {
        return refuse(request, reply, ALREADY_EXISTS.create(key));
      }
      if (result.status === 'mismatch') {
        // Nothing stored: the name stays free for the right bytes (docs/api.md, "Checked transfers").
        return refuse(request, reply, DIGEST_MISMATCH.create(key, declared ?? '', result.sha256));
      }
      if (result.status === 'same') {
        // Its own bytes, stored by an earlier try of this address whose answer was lost: the
        // record (if the crash came before it) comes from them, and the client hears 200, not 409.
        await ingest({ ...ctx, log: request.log }, key);
        return reply.code(200).header('ETag', `"${result.sha256}"`).send();
      }
      try {
        await ingest({ ...ctx, log: request.log }, key, result, uploader);
      } catch (err) {
        // No record, so no file either: the client is told the upload failed, and its retry must find the name free.
        await unstore(key, request.log);
        throw isOutOfSpace(err) ? new OutOfSpaceError(key, err) : err;
      }
      return reply.code(200).header('ETag', `"${result.sha256}"`).send();
    });

    app.get('/store/*', { config: { access: 'signed' } }, async (request, reply) => {
      const key = authorize(request, reply);
      if (key === undefined) return reply;
      // Never served through a symbolic link planted in the store (send would follow it).
      if (store.linkOn(key) !== undefined) {
        request.log.warn({ file_path: key }, 'download refused: the store holds a symbolic link on its path');
        return sendError(reply, FILE_NOT_FOUND.create(key, exampleStoredPath(ctx.mission)));
      }
      // The record gives the digest headers (never re-hashed) and the file's standing: the one
      // decision of every byte path (servable.ts), so an address handed out before a withdrawal
      // or an audit answers as /download does from then on; a curator's evidence address is
      // signed as such (docs/api.md "Withdrawn files"); who sees what was decided for the caller
      // the address was handed to (SIGNED).
      const found = ctx.catalog.get(key);
      const record = found instanceof Promise ? await found : found;
      const verdict = record && servableTo(ctx, SIGNED, record, { evidence: (request.query as StoreQuery).withdrawn === 'include' });
      if (verdict && !verdict.served) return sendError(reply, verdict.refusal);
      return replyWithStoredFile(request, reply, store, ctx.mission, key, record);
    });
  };
}
