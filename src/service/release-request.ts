import { parseQueryFilter, type QueryFilter } from '../catalog/index.js';
import { resolveRequestPath, type MissionConfig } from '../mission/index.js';
import { codePointLabel, firstControlCharacter } from '../wire/control-characters.js';
import { parseInstant } from '../wire/instant.js';
import { QUERY_PARAMETERS, isQueryParameter } from '../wire/query.js';
import { RELEASE_KINDS, type ReleaseKind } from '../wire/release.js';

/*
 * The bodies of POST /releases and POST /releases/{n}/retract, checked (docs/api.md
 * "Releases"): every problem answered in words (400 SDC_INVALID_RELEASE), nothing coerced.
 */

export const MAX_RELEASE_TITLE = 300;
export const MAX_RELEASE_DESCRIPTION = 10_000;
export const MAX_RETRACT_REASON = 1000;
/** Files a release may name, and paths it may exclude, in one request. */
export const MAX_RELEASE_PATHS = 100_000;

/** A release asked for: its files by path (each resolved; `unresolved` those that name no file), or by a query. */
export interface ReleaseRequest {
  readonly title: string;
  readonly description?: string;
  readonly kind: ReleaseKind;
  readonly release_date?: string;
  readonly source: { readonly paths: readonly string[]; readonly unresolved: readonly string[] } | { readonly filter: QueryFilter };
  readonly exclude: readonly string[];
}

const MEMBERS = ['title', 'description', 'files', 'query', 'exclude', 'release_date', 'kind'];
const EXAMPLE = 'e.g. {"title": "Release 3", "query": {"instrument": "swe", "data_level": "l1a"}, "exclude": ["<path or name>"]}';

/** A line of plain text of at most `max` characters, or why not. */
function lineProblem(text: unknown, member: string, max: number): string | undefined {
  if (typeof text !== 'string' || text.trim() === '') return `${member} must be a non-empty text of at most ${max} characters, ${EXAMPLE}.`;
  if ([...text].length > max) return `${member} is ${[...text].length} characters long; at most ${max} are taken.`;
  const control = firstControlCharacter(text);
  if (control !== undefined) return `${member} contains the control character ${codePointLabel(control)}; it is one line of plain text.`;
  return undefined;
}

/** A list of stored paths or file names (at most MAX_RELEASE_PATHS), or why not. */
function pathList(value: unknown, member: string): string[] | string {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== '')) return `${member} must be an array of stored paths or file names (texts), ${EXAMPLE}.`;
  if (value.length > MAX_RELEASE_PATHS) return `${member} names ${value.length} files; at most ${MAX_RELEASE_PATHS} are taken (use a query).`;
  return value as string[];
}

/** The body's problem in words, or the request. */
export function parseReleaseBody(body: unknown, mission: MissionConfig): ReleaseRequest | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `Expected a JSON object, ${EXAMPLE}.`;
  const m = body as Record<string, unknown>;
  const unknown = Object.keys(m).find((name) => !MEMBERS.includes(name));
  if (unknown !== undefined) return `${unknown} is not a member of a release; it takes ${MEMBERS.join(', ')}.`;
  const titleProblem = lineProblem(m.title, 'title', MAX_RELEASE_TITLE);
  if (titleProblem) return titleProblem;
  if (m.description !== undefined && (typeof m.description !== 'string' || [...m.description].length > MAX_RELEASE_DESCRIPTION)) {
    return `description must be a text of at most ${MAX_RELEASE_DESCRIPTION} characters.`;
  }
  if (m.kind !== undefined && !(RELEASE_KINDS as readonly unknown[]).includes(m.kind)) return `kind must be one of ${RELEASE_KINDS.join(', ')} (release when left out).`;
  let releaseDate: string | undefined;
  if (m.release_date !== undefined) {
    releaseDate = typeof m.release_date === 'string' ? parseInstant(m.release_date) : undefined;
    if (releaseDate === undefined) return 'release_date must be an ISO-8601 date-time with a zone or a day (YYYYMMDD), e.g. 2027-01-01T00:00:00Z; a future one schedules the release.';
  }
  if ((m.files === undefined) === (m.query === undefined)) return `A release names its files either as files (a list) or as query (the parameters of GET /query), not both nor neither, ${EXAMPLE}.`;
  const exclude = m.exclude === undefined ? [] : pathList(m.exclude, 'exclude');
  if (typeof exclude === 'string') return exclude;
  const excluded: string[] = [];
  for (const entry of exclude) {
    const resolved = resolveRequestPath(entry, mission);
    if (resolved.kind !== 'file') return `exclude names ${JSON.stringify(entry)}, which is not the stored path or name of a file.`;
    excluded.push(resolved.path);
  }
  let source: ReleaseRequest['source'];
  if (m.files !== undefined) {
    const files = pathList(m.files, 'files');
    if (typeof files === 'string') return files;
    const paths: string[] = [];
    const unresolved: string[] = [];
    for (const entry of files) {
      const resolved = resolveRequestPath(entry, mission);
      if (resolved.kind === 'file') paths.push(resolved.path);
      else unresolved.push(entry);
    }
    source = { paths, unresolved };
  } else {
    const filter = queryFilter(m.query, mission);
    if (typeof filter === 'string') return filter;
    source = { filter };
  }
  return {
    title: m.title as string,
    ...(m.description !== undefined && m.description !== '' ? { description: m.description as string } : {}),
    kind: (m.kind as ReleaseKind | undefined) ?? 'release',
    ...(releaseDate !== undefined ? { release_date: releaseDate } : {}),
    source,
    exclude: excluded,
  };
}

/**
 * A release's query: the filters of GET /query, values as texts. Without `version`, the latest
 * version of each product (version=latest), chosen before `exclude` applies.
 */
function queryFilter(value: unknown, mission: MissionConfig): QueryFilter | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `query must be an object of GET /query's filters, ${EXAMPLE}.`;
  const pairs: [string, string][] = [];
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!isQueryParameter(name) || QUERY_PARAMETERS[name].role !== 'filter') return `query.${name} is not a filter of GET /query; a release takes its filters only (no paging, order or format).`;
    if (typeof v !== 'string') return `query.${name} must be a text, as in a query string (e.g. "20240105").`;
    pairs.push([name, v]);
  }
  if (!pairs.some(([name]) => name === 'version')) pairs.push(['version', 'latest']);
  const parsed = parseQueryFilter(pairs, mission);
  return parsed.ok ? parsed.filter : `query: ${parsed.message}`;
}

/** POST /releases/{n}/retract's body: its reason, or what is wrong. */
export function parseRetractBody(body: unknown): string | { readonly reason: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Expected a JSON object with a reason, e.g. {"reason": "calibration superseded"}.';
  const unknown = Object.keys(body).find((name) => name !== 'reason');
  if (unknown !== undefined) return `${unknown} is not a member of a retraction; it takes reason (required).`;
  const reason = (body as Record<string, unknown>).reason;
  const problem = lineProblem(reason, 'reason', MAX_RETRACT_REASON);
  return problem ?? { reason: reason as string };
}
