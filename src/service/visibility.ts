import type { Audience, FileRecord } from '../catalog/index.js';
import { accessPolicyOf, type AccessPolicy } from '../mission/index.js';
import type { ServiceContext } from './service-context.js';

/*
 * Who sees what (docs/api.md "Who sees what"), decided here once for the service: which rows a
 * caller's reads may return (the catalog applies it in SQL: src/catalog/visibility-sql.ts), and
 * whether a byte path may serve a record's bytes. Any key (reader, uploader, curator), and a
 * signed-in user, sees every file; a caller without one sees a file once its release date has passed.
 */

/** What the transport knows of the caller: whether it holds a valid key (or is signed in). */
export interface Caller {
  readonly keyed: boolean;
}

/** A caller without a key: what a transport that knows nothing of its caller passes. */
export const ANONYMOUS: Caller = Object.freeze({ keyed: false });

/**
 * The holder of a signed address (the local store's GET and HEAD): it was handed out only by a
 * byte path that made this decision for the caller it answered (servable.ts), and a release
 * date only ever moves earlier, so what that caller could see it still can.
 */
export const SIGNED: Caller = Object.freeze({ keyed: true });

/**
 * Whether the policy can hold any file for the team. A mission whose every file is public at
 * ingestion (the built-in one) filters nothing, so its answers and their cost are today's.
 */
function holdsAny(policy: AccessPolicy): boolean {
  return policy.default === 'team' || policy.rules.some((rule) => rule.access === 'team');
}

/** Whether the caller's reads are limited at all. */
function limited(ctx: ServiceContext, caller: Caller): boolean {
  return !caller.keyed && holdsAny(accessPolicyOf(ctx.mission));
}

/** The audience of the caller's reads of records (query, counts, coverage, the live feed's filter). */
export function recordAudience(ctx: ServiceContext, caller: Caller): Audience | undefined {
  // With embargoedMetadata "public" the records are everyone's; only the bytes wait.
  return limited(ctx, caller) && accessPolicyOf(ctx.mission).embargoedMetadata === 'hidden' ? 'public' : undefined;
}

/** The audience of the caller's reads of the change log: a team file's creation reaches the public as its release. */
export function changeAudience(ctx: ServiceContext, caller: Caller): Audience | undefined {
  return limited(ctx, caller) ? 'public' : undefined;
}

/** Whether the caller sees every release (a key holder), or only published ones (docs/api.md "Releases"). */
export function seesEveryRelease(ctx: ServiceContext, caller: Caller): boolean {
  return !limited(ctx, caller);
}

/** The releases a read's `release=N` may name (the filter's `releases`): published ones only for a caller without a key. */
export function releaseScope(ctx: ServiceContext, caller: Caller): 'published' | undefined {
  return seesEveryRelease(ctx, caller) ? undefined : 'published';
}

/** Whether a record's release date has passed. */
export function isReleased(record: Pick<FileRecord, 'release_date'>, now = new Date().toISOString()): boolean {
  return record.release_date !== undefined && record.release_date <= now;
}

/**
 * Who sees what for the byte paths (servable.ts's servableTo calls it for each): `serve`;
 * `hidden` (answer as for a name never stored); or `not_released` (the record is public, the
 * bytes are not yet).
 */
export function byteAccess(ctx: ServiceContext, caller: Caller, record: Pick<FileRecord, 'release_date'>): 'serve' | 'hidden' | 'not_released' {
  if (!limited(ctx, caller) || isReleased(record)) return 'serve';
  return accessPolicyOf(ctx.mission).embargoedMetadata === 'hidden' ? 'hidden' : 'not_released';
}
