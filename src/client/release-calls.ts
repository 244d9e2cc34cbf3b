import type { ReleaseCreated, ReleaseDescription, ReleaseFormat, ReleaseKind, ReleaseSummary } from '../wire/release.js';
import { BadResponseError } from './client-errors.js';
import type { ClientContext } from './client-context.js';
import { answerError } from './http-transport.js';

/*
 * Numbered releases (docs/api.md "Releases"), one attempt each: POST /releases, GET /releases,
 * GET /releases/{n} (any format), POST /releases/{n}/retract. Making and retracting are not
 * retried here; a curator who runs one again after a lost answer gets the release made (200)
 * or the retraction done (200), not a second one (docs/api.md "Releases").
 */

/** What POST /releases takes: files by path or name, or a query's filters; the rest optional. */
export interface ReleaseRequest {
  readonly title: string;
  readonly description?: string;
  readonly files?: readonly string[];
  readonly query?: Readonly<Record<string, string>>;
  readonly exclude?: readonly string[];
  /** ISO-8601 with a zone, or YYYYMMDD; in the future: scheduled. */
  readonly releaseDate?: string;
  readonly kind?: ReleaseKind;
}

function parse(text: string, what: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new BadResponseError(`expected JSON from ${what}, got: ${text.slice(0, 200)}`, status);
  }
}

export async function requestCreateRelease(ctx: ClientContext, request: ReleaseRequest): Promise<ReleaseCreated> {
  const body = {
    title: request.title,
    ...(request.description !== undefined ? { description: request.description } : {}),
    ...(request.files !== undefined ? { files: request.files } : {}),
    ...(request.query !== undefined ? { query: request.query } : {}),
    ...(request.exclude !== undefined && request.exclude.length > 0 ? { exclude: request.exclude } : {}),
    ...(request.releaseDate !== undefined ? { release_date: request.releaseDate } : {}),
    ...(request.kind !== undefined ? { kind: request.kind } : {}),
  };
  const res = await ctx.transport.apiCall('POST', '/releases', body);
  // 200: asked for again, answered with the release made (docs/api.md "Releases").
  if (res.statusCode !== 201 && res.statusCode !== 200) throw await answerError('release', res);
  const created = parse(await res.body.text(), 'POST /releases', res.statusCode) as ReleaseCreated;
  if (typeof created?.release !== 'number') throw new BadResponseError('expected the new release\'s number from POST /releases', res.statusCode);
  return created;
}

export async function requestReleases(ctx: ClientContext): Promise<ReleaseSummary[]> {
  const res = await ctx.transport.api('/releases');
  if (res.statusCode !== 200) throw await answerError('release', res);
  const list = parse(await res.body.text(), 'GET /releases', res.statusCode);
  if (!Array.isArray(list)) throw new BadResponseError('expected a JSON array from GET /releases', res.statusCode);
  return list as ReleaseSummary[];
}

/** GET /releases/{n}: the release and its manifest. */
export async function requestRelease(ctx: ClientContext, number: number): Promise<ReleaseDescription> {
  const release = parse(await requestReleaseDocument(ctx, number, 'json'), `GET /releases/${number}`, 200) as ReleaseDescription;
  if (typeof release?.release !== 'number' || !Array.isArray(release.files)) throw new BadResponseError(`expected a release from GET /releases/${number}`, 200);
  return release;
}

/** GET /releases/{n}?format=: the document as text (JSON, CSV, Metalink, DataCite JSON). */
export async function requestReleaseDocument(ctx: ClientContext, number: number, format: ReleaseFormat): Promise<string> {
  const res = await ctx.transport.api(`/releases/${number}${format === 'json' ? '' : `?format=${format}`}`);
  if (res.statusCode !== 200) throw await answerError('release', res);
  return res.body.text();
}

/** POST /releases/{n}/retract: the release as it now is. */
export async function requestRetraction(ctx: ClientContext, number: number, reason: string): Promise<ReleaseDescription> {
  const res = await ctx.transport.apiCall('POST', `/releases/${number}/retract`, { reason });
  if (res.statusCode !== 200) throw await answerError('release', res);
  return parse(await res.body.text(), `POST /releases/${number}/retract`, res.statusCode) as ReleaseDescription;
}
