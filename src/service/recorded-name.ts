import { ALREADY_EXISTS, NAME_WITHDRAWN, type ServerError } from '../errors/index.js';
import { andThen, type MaybePromise } from './maybe-async.js';
import type { ServiceContext } from './service-context.js';

const NAME_FIELDS = ['status'] as const;

/**
 * A name the catalog has a record of is taken for good, whatever the store holds now (its bytes
 * purged, or lost): the 409 that says so, withdrawn names with their own text (docs/api.md
 * "Withdrawn files"), or undefined when the name has no record. The one name check of
 * `GET /upload`, the local store's single PUT and the completion of an upload in parts.
 */
export function recordedName(ctx: ServiceContext, path: string): MaybePromise<ServerError | undefined> {
  // The status alone: the one column this check reads (docs/performance.md, "Per-request cost on both engines").
  return andThen(ctx.catalog.getFields(path, NAME_FIELDS), (record) => (record === undefined ? undefined : (record.status === 'withdrawn' ? NAME_WITHDRAWN : ALREADY_EXISTS).create(path)));
}
