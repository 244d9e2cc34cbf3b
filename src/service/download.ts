import { FILE_NOT_FOUND, INVALID_NAME, NO_FILE_IN_PATH, NOT_RELEASED } from '../errors/index.js';
import { exampleStoredPath, resolveRequestPath, type ScienceFileName } from '../mission/index.js';
import { ingestionStamp } from '../wire/instant.js';
import { failure, type Envelope } from './envelope.js';
import { ingest, policyReleaseDate } from './ingest.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import { isOutOfSpace } from './out-of-space.js';
import { evidenceRefusal, servableTo, servableUnrecorded, SERVING_FIELDS, type ServeVerdict, type WithdrawnAccess } from './servable.js';
import { promoteWaitingFor } from './promotion.js';
import type { ServiceContext } from './service-context.js';
import { ANONYMOUS, type Caller } from './visibility.js';

/**
 * GET /download/{path} (docs/api.md, The three endpoints): full stored path or bare file name ->
 * 302 to a signed, followable address of the bytes. Answered at once when the catalog and
 * the store answer at once (maybe-async.ts).
 */
export function download(ctx: ServiceContext, requestPath: string, evidence: WithdrawnAccess = {}, caller: Caller = ANONYMOUS): MaybePromise<Envelope> {
  const refused = evidenceRefusal(evidence);
  if (refused) return failure(refused);
  const resolved = resolveRequestPath(requestPath, ctx.mission);
  switch (resolved.kind) {
    case 'no_file':
      return failure(NO_FILE_IN_PATH.create());
    case 'invalid_name':
      return failure(INVALID_NAME.create(resolved.message));
    case 'wrong_directory':
      return failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)));
    case 'file':
      break;
  }
  const path = resolved.path;
  const name = resolved.name;
  const ask = { evidence: evidence.include };
  const answer = (verdict: ServeVerdict): MaybePromise<Envelope> => {
    if (verdict.served) return redirect(ctx, path, verdict.evidence);
    return FILE_NOT_FOUND.is(verdict.refusal) ? andThen(absentNameLookups(ctx, path), () => failure(verdict.refusal)) : failure(verdict.refusal);
  };
  // Only the fields that decide (servable.ts); a hidden or unreleased file's refusal needs no more.
  return andThen(ctx.catalog.getFields(path, SERVING_FIELDS), (standing) => {
    if (standing === undefined) return unrecorded(ctx, path, name, requestPath, caller);
    const verdict = servableTo(ctx, caller, { file_path: path, ...standing }, ask, requestPath);
    if (verdict.served || FILE_NOT_FOUND.is(verdict.refusal) || NOT_RELEASED.is(verdict.refusal)) return answer(verdict);
    // Withdrawn or damaged: the answer says when and why, from the whole record, read now (it decides again).
    return andThen(ctx.catalog.get(path), (record) => (record === undefined ? unrecorded(ctx, path, name, requestPath, caller) : answer(servableTo(ctx, caller, record, ask, requestPath))));
  });
}

/**
 * The store lookups `unrecorded` makes for a name never stored, made for a file hidden from the
 * caller too, results unused: without them its 404 came sooner, by an S3 HEAD and a listing,
 * and that time told a file existed (docs/api.md "Who sees what"; bench/hidden-download.ts).
 * Nothing waiting is promoted here: a recorded name's staged uploads are the sweep's.
 */
function absentNameLookups(ctx: ServiceContext, path: string): MaybePromise<void> {
  const staging = ctx.store.staging;
  return andThen(ctx.store.head(path), () => (staging ? drain(staging.listStaged(path)) : undefined));
}

async function drain(items: AsyncIterable<unknown>): Promise<void> {
  for await (const item of items) void item;
}

/** The 302 to the stored bytes' signed address (`evidence`: a withdrawn file's, for a curator). */
function redirect(ctx: ServiceContext, path: string, evidence = false): MaybePromise<Envelope> {
  const signed = (ttl: number, expires: Record<string, string>) =>
    andThen(
      ctx.store.presignGet(path, ttl, evidence ? { evidence } : undefined),
      (url): Envelope => ({
        statusCode: 302,
        headers: { 'Content-Type': 'text/html', Location: url, ...expires },
        body: { download_url: url },
      }),
    );
  if (ctx.store.signingLifetime === undefined) return signed(ctx.downloadTtl, {});
  // An address that dies before SDC_DOWNLOAD_TTL says when (docs/api.md "The three endpoints").
  return ctx.store.signingLifetime(ctx.downloadTtl).then((ttl) =>
    signed(ttl, ttl < ctx.downloadTtl ? { [DOWNLOAD_EXPIRES_HEADER]: new Date(Date.now() + ttl * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
  );
}

/** On a download's 302 whose address dies before SDC_DOWNLOAD_TTL: when it does (UTC, ISO 8601). */
export const DOWNLOAD_EXPIRES_HEADER = 'X-Download-Expires';

/** A path without a record: stored without one, or waiting under a staging key (S3), it is indexed on the spot. */
function unrecorded(ctx: ServiceContext, path: string, name: ScienceFileName, requestPath: string, caller: Caller): MaybePromise<Envelope> {
  const indexThenRedirect = () => indexThenServe(ctx, path, name, requestPath, caller);
  return andThen(ctx.store.head(path), (stored) =>
    stored
      ? indexThenRedirect()
      : andThen(promoteWaitingFor(ctx, path), (state) => (state === 'stored' ? indexThenRedirect() : failure(FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission))))),
  );
}

async function indexThenServe(ctx: ServiceContext, path: string, name: ScienceFileName, requestPath: string, caller: Caller): Promise<Envelope> {
  // On a full disk the record waits; the bytes are served anyway.
  await ingest(ctx, path).catch((err: unknown) => {
    if (!isOutOfSpace(err)) throw err;
    ctx.log.warn({ file_path: path }, 'out of space: not indexed now');
  });
  // The record just written decides as any other (the access policy set its release date);
  // without one, the policy decides as for the record ingest would have written (now).
  const record = await ctx.catalog.get(path);
  const verdict =
    record === undefined
      ? servableUnrecorded(ctx, caller, path, policyReleaseDate(ctx, name, ingestionStamp()), requestPath)
      : servableTo(ctx, caller, record, {}, requestPath);
  return verdict.served ? redirect(ctx, path, verdict.evidence) : failure(verdict.refusal);
}
