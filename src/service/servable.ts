import { fixityFailed, type FileRecord } from '../catalog/index.js';
import { FILE_NOT_FOUND, FILE_WITHDRAWN, FIXITY_FAILED, NOT_RELEASED, raise, WITHDRAWN_NEEDS_CURATOR, type ServerError } from '../errors/index.js';
import { exampleStoredPath } from '../mission/index.js';
import type { ServiceContext } from './service-context.js';
import { byteAccess, type Caller } from './visibility.js';
import { escapeControlCharacters } from '../wire/control-characters.js';

/**
 * What a byte path asks to serve: a file's current bytes, or (`evidence`) a withdrawn file's kept
 * bytes, which only a curator may ask for (docs/api.md "Withdrawn files"): by `/download?withdrawn=include`
 * with a curator key, or by the evidence address that request was handed.
 */
export interface ServeAsk {
  readonly evidence?: boolean;
}

/**
 * The fields of a record that decide whether its bytes are served (servableTo): who sees it
 * (release_date), withdrawn (status), damaged (fixity). A byte path reads only these
 * (Catalog.getFields), and the whole record only to word a refusal (docs/performance.md,
 * "Per-request cost on both engines").
 */
export const SERVING_FIELDS = ['status', 'release_date', 'fixity'] as const;

/** A record as servableTo decides on it: the deciding fields at least; a refusal's words come from the rest when there. */
export type ServingRecord = Pick<FileRecord, 'file_path' | (typeof SERVING_FIELDS)[number]> & Partial<FileRecord>;

/** Served (`evidence`: a withdrawn file's kept bytes, for a curator), or refused and why. */
export type ServeVerdict = { readonly served: true; readonly evidence: boolean } | { readonly served: false; readonly refusal: ServerError };

/**
 * May this caller have this record's bytes, and if not, why: the one decision of every byte path
 * (`/download` and `/v0/download`, the local store's signed GET and HEAD, Metalink; Lambda goes
 * through the same app). First who sees what (visibility.ts, docs/api.md "Who sees what"): a
 * file hidden from the caller answers 404 exactly as a name never stored (`requestPath`: the
 * name as asked), a public record whose bytes are not released yet 403 SDC_NOT_RELEASED; then
 * the record's own standing (servable).
 */
export function servableTo(ctx: ServiceContext, caller: Caller, record: ServingRecord, ask: ServeAsk = {}, requestPath = record.file_path): ServeVerdict {
  const visible = servableUnrecorded(ctx, caller, record.file_path, record.release_date, requestPath);
  return visible.served ? servable(record, ask) : visible;
}

/**
 * The bytes of a name stored without a record, served while the catalog cannot take one (a
 * download that indexes on the spot, download.ts, on a full catalog disk): who sees what is
 * decided as for the record ingest would have written (`releaseDate`: the policy's date for
 * it, ingest.ts's policyReleaseDate), so a team file is never served where its record would
 * not be (docs/api.md "Who sees what"). Such a file has no standing of its own yet.
 */
export function servableUnrecorded(ctx: ServiceContext, caller: Caller, filePath: string, releaseDate: string | undefined, requestPath = filePath): ServeVerdict {
  const access = byteAccess(ctx, caller, { release_date: releaseDate });
  if (access === 'hidden') return { served: false, refusal: FILE_NOT_FOUND.create(requestPath, exampleStoredPath(ctx.mission)) };
  if (access === 'not_released') return { served: false, refusal: NOT_RELEASED.create(filePath, releaseDate) };
  return { served: true, evidence: false };
}

/**
 * The record's own standing, once the caller may see the file (servableTo: byte paths call
 * that). In this order (docs/api.md "Which answer a download gets"):
 *
 * 1. withdrawn, and not asked as evidence: 410 (gone on purpose, for good: the stronger fact,
 *    whatever an audit found of the bytes kept);
 * 2. damaged (the last fixity audit found the bytes changed or gone): 409, evidence included;
 * 3. otherwise served; a withdrawn file's bytes as evidence.
 */
export function servable(record: ServingRecord, ask: ServeAsk = {}): ServeVerdict {
  const withdrawn = record.status === 'withdrawn';
  if (withdrawn && !ask.evidence) return { served: false, refusal: withdrawnError(record) };
  if (fixityFailed(record.fixity)) return { served: false, refusal: FIXITY_FAILED.create(record.file_path, record.verified_date ?? 'an earlier date', record.fixity) };
  return { served: true, evidence: withdrawn };
}

/** `?withdrawn=include` on `/download`, and whether the request's key is a curator's. */
export interface WithdrawnAccess {
  readonly include?: boolean;
  readonly curator?: boolean;
}

/** A request for evidence without a curator key: refused before anything is looked up (403). */
export function evidenceRefusal(access: WithdrawnAccess): ServerError | undefined {
  return access.include && !access.curator ? WITHDRAWN_NEEDS_CURATOR.create() : undefined;
}

/** 410 Gone: when, why, and the replacement (also as a Link, RFC 5829 successor-version). */
function withdrawnError(record: ServingRecord): ServerError {
  const replacement = record.superseded_by;
  const link: Record<string, string> = replacement === undefined ? {} : { Link: `</download/${encodeURI(replacement)}>; rel="successor-version"` };
  // A reason stored before control characters were refused shows them escaped (docs/api.md, "Withdrawn files").
  return raise(FILE_WITHDRAWN, [record.file_path, record.withdrawn_date ?? '', escapeControlCharacters(record.withdrawn_reason ?? ''), replacement], { headers: link });
}
