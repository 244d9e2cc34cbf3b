import type { StoredRelease } from '../catalog/index.js';
import { ALREADY_RETRACTED, EMPTY_RELEASE, INVALID_QUERY, INVALID_RELEASE, NOTHING_TO_LIST, RELEASE_NOT_FOUND, UNRELEASABLE_FILES } from '../errors/index.js';
import { accessPolicyOf } from '../mission/index.js';
import { RELEASE_FORMATS, RELEASE_NUMBER_PATTERN, type ManifestEntry, type ReleaseCreated, type ReleaseFormat, type ReleaseStatus, type ReleaseSummary } from '../wire/release.js';
import { dataciteOf } from './datacite.js';
import { failure, JsonTextStream, TextStream, type Envelope } from './envelope.js';
import { metalinkDocument, METALINK_TYPE } from './metalink.js';
import { parseReleaseBody, parseRetractBody } from './release-request.js';
import type { ServiceContext } from './service-context.js';
import { recordAudience, seesEveryRelease, type Caller } from './visibility.js';

/*
 * Numbered releases (docs/api.md "Releases"): a curator makes one from a list of files or a
 * query, anyone lists and reads the published ones (key holders every one), a curator retracts
 * one. Its files become public at its date through the one visibility rule (their release_date:
 * src/catalog/release-manifests.ts); a scheduled one is logged by the background step
 * (release-publisher.ts) when its date comes.
 */

/** Manifest entries read from the catalog at once while an answer streams. */
const MANIFEST_PAGE = 1000;

const JSON_HEADERS = { 'Content-Type': 'application/json' } as const;

/** Where a release is described: the transport's (under SDC_PUBLIC_URL when set, else relative). */
export type ReleaseLink = (number: number) => string;

function statusOf(release: StoredRelease, now: string): ReleaseStatus {
  if (release.retracted_date !== undefined) return 'retracted';
  return release.release_date <= now ? 'published' : 'scheduled';
}

/** A stored release as the answers describe it. */
export function releaseSummary(release: StoredRelease, now = new Date().toISOString()): ReleaseSummary {
  const { number, file_count, bytes, ...rest } = release;
  return {
    release: number,
    title: rest.title,
    ...(rest.description !== undefined ? { description: rest.description } : {}),
    kind: rest.kind,
    release_date: rest.release_date,
    created_by: rest.created_by,
    created_at: rest.created_at,
    status: statusOf(release, now),
    file_count,
    bytes,
    ...(rest.retracted_date !== undefined ? { retracted_date: rest.retracted_date, retracted_reason: rest.retracted_reason ?? '', retracted_by: rest.retracted_by ?? '' } : {}),
  };
}

/**
 * POST /releases (curator): 201 with the number, the file count, the bytes, the date and the
 * address; 400 for a bad body, files that are unknown or withdrawn (all named), or an empty set.
 */
export async function createRelease(ctx: ServiceContext, body: unknown, curator: string, link: ReleaseLink): Promise<Envelope> {
  const request = parseReleaseBody(body, ctx.mission);
  if (typeof request === 'string') return failure(INVALID_RELEASE.create(request));
  if ('paths' in request.source) {
    const refused = [...request.source.unresolved.map((entry) => `${JSON.stringify(entry)} (not a file name)`)];
    // Checked a page of paths per read (release-writes.ts), all refusals named.
    for (const { path, why } of await ctx.catalog.unreleasable(request.source.paths)) refused.push(`${path} (${why})`);
    if (refused.length > 0) return failure(UNRELEASABLE_FILES.create(refused.join(', ')));
  }
  const now = new Date().toISOString();
  // A date already past is now: the files become public with this commit, never back in time.
  const releaseDate = request.release_date !== undefined && request.release_date > now ? request.release_date : now;
  const release = await ctx.catalog.createRelease({
    title: request.title,
    ...(request.description !== undefined ? { description: request.description } : {}),
    kind: request.kind,
    release_date: releaseDate,
    created_by: curator,
    created_at: now,
    source: 'paths' in request.source ? { paths: request.source.paths } : { filter: request.source.filter },
    exclude: request.exclude,
  });
  if (release === undefined) return failure(EMPTY_RELEASE.create());
  ctx.log.info({ release: release.number, files: release.file_count, release_date: release.release_date, repeat: release.repeat }, release.repeat ? 'release asked for again: answered with the one made' : 'release made');
  const created: ReleaseCreated = { release: release.number, files: release.file_count, bytes: release.bytes, release_date: release.release_date, href: link(release.number) };
  // A repeat (a lost answer asked again, src/catalog/release-repeats.ts) is answered 200: nothing new was made.
  return { statusCode: release.repeat ? 200 : 201, headers: { ...JSON_HEADERS, Location: created.href }, body: created };
}

/** GET /releases: every release a key holder may see, the published ones for anyone else, by number. */
export async function listReleases(ctx: ServiceContext, caller: Caller): Promise<Envelope> {
  const now = new Date().toISOString();
  const every = seesEveryRelease(ctx, caller);
  const list = (await ctx.catalog.releases()).map((r) => releaseSummary(r, now)).filter((r) => every || r.status === 'published');
  return { statusCode: 200, headers: JSON_HEADERS, body: list };
}

/** The release a caller may see under this number, or undefined (answered 404 as a number never given). */
async function visibleRelease(ctx: ServiceContext, caller: Caller, number: string): Promise<ReleaseSummary | undefined> {
  if (!new RegExp(RELEASE_NUMBER_PATTERN).test(number)) return undefined;
  const stored = await ctx.catalog.release(Number(number));
  if (stored === undefined) return undefined;
  const summary = releaseSummary(stored);
  return seesEveryRelease(ctx, caller) || summary.status === 'published' ? summary : undefined;
}

/** The format asked for (`format` alone, at most once), or why not. */
function releaseFormat(pairs: Iterable<readonly [string, string]>): ReleaseFormat | string {
  let format: ReleaseFormat | undefined;
  for (const [name, value] of pairs) {
    if (name !== 'format') return `${name} is not a parameter of GET /releases/{n}; it takes format (${RELEASE_FORMATS.join(', ')}).`;
    if (format !== undefined) return 'format was given more than once. Give it at most once.';
    if (!(RELEASE_FORMATS as readonly string[]).includes(value)) return `Invalid format ${JSON.stringify(value)}: expected one of ${RELEASE_FORMATS.join(', ')}.`;
    format = value as ReleaseFormat;
  }
  return format ?? 'json';
}

/**
 * GET /releases/{n}: the release and its manifest (json), the manifest as CSV or Metalink, or
 * its DataCite description. 404 for a number the caller may not see.
 */
export async function showRelease(ctx: ServiceContext, number: string, pairs: Iterable<readonly [string, string]>, caller: Caller, link: ReleaseLink): Promise<Envelope> {
  const format = releaseFormat(pairs);
  if (!(RELEASE_FORMATS as readonly string[]).includes(format)) return failure(INVALID_QUERY.create(format));
  const release = await visibleRelease(ctx, caller, number);
  if (release === undefined) return failure(RELEASE_NOT_FOUND.create(number));
  switch (format as ReleaseFormat) {
    case 'json':
      return { statusCode: 200, headers: JSON_HEADERS, body: describe(ctx, release) };
    case 'csv':
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="release-${release.release}.csv"` },
        body: new TextStream(async function* () {
          yield 'file_path,size,sha256\n';
          for await (const page of manifestPages(ctx, release.release)) yield page.map((e) => `${e.file_path},${e.size},${e.sha256}\n`).join('');
        }),
      };
    case 'metalink': {
      // The files' records as they are now, each served or not as /download would serve it to this caller.
      const records = ctx.catalog.query({ release: String(release.release), status: 'any', audience: recordAudience(ctx, caller) });
      const document = await metalinkDocument(ctx, records, caller);
      if (document === undefined) return failure(NOTHING_TO_LIST.create());
      return { statusCode: 200, headers: { 'Content-Type': METALINK_TYPE, 'Content-Disposition': `attachment; filename="release-${release.release}.meta4"` }, body: document };
    }
    case 'datacite':
      return { statusCode: 200, headers: { 'Content-Type': 'application/vnd.datacite.datacite+json' }, body: dataciteOf(ctx.mission, release, link(release.release)) };
  }
}

/** The release and its manifest as one JSON text, the manifest streamed a page at a time. */
function describe(ctx: ServiceContext, release: ReleaseSummary): JsonTextStream {
  return new JsonTextStream(async function* () {
    yield `${JSON.stringify(release).slice(0, -1)},"files":[`;
    let first = true;
    for await (const page of manifestPages(ctx, release.release)) {
      yield (first ? '' : ',') + page.map((e) => JSON.stringify(e)).join(',');
      first = false;
    }
    yield ']}';
  });
}

async function* manifestPages(ctx: ServiceContext, number: number): AsyncIterable<ManifestEntry[]> {
  for (let after: string | undefined; ; ) {
    const page = await ctx.catalog.releaseManifest(number, after, MANIFEST_PAGE);
    if (page.length > 0) yield page;
    if (page.length < MANIFEST_PAGE) return;
    after = page.at(-1)!.file_path;
  }
}

/**
 * POST /releases/{n}/retract (curator): its files return to the team unless another release
 * that is not retracted, or the access policy, makes them public; 200 with the release as it
 * now is, also to the same curator asking the same again; 409 when already retracted otherwise.
 */
export async function retractRelease(ctx: ServiceContext, number: string, body: unknown, curator: string): Promise<Envelope> {
  if (!new RegExp(RELEASE_NUMBER_PATTERN).test(number)) return failure(RELEASE_NOT_FOUND.create(number));
  const request = parseRetractBody(body);
  if (typeof request === 'string') return failure(INVALID_RELEASE.create(request));
  // Files return to the date the mission's policy gives them (the catalog applies it in SQL: policy-sql.ts).
  const outcome = await ctx.catalog.retractRelease(Number(number), { date: new Date().toISOString(), reason: request.reason, by: curator }, accessPolicyOf(ctx.mission));
  switch (outcome.outcome) {
    case 'not_found':
      return failure(RELEASE_NOT_FOUND.create(number));
    case 'already_retracted': {
      const done = outcome.release;
      // The same curator's same retraction again (its answer lost): answered as it was, as a repeated withdrawal is.
      if (done.retracted_by === curator && done.retracted_reason === request.reason) return { statusCode: 200, headers: JSON_HEADERS, body: describe(ctx, releaseSummary(done)) };
      return failure(ALREADY_RETRACTED.create(done.number, done.retracted_date ?? '', done.retracted_by ?? ''));
    }
    case 'retracted': {
      const release = await ctx.catalog.release(outcome.release.number);
      ctx.log.info({ release: outcome.release.number }, 'release retracted');
      return { statusCode: 200, headers: JSON_HEADERS, body: describe(ctx, releaseSummary(release!)) };
    }
  }
}
