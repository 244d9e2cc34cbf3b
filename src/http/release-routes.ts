import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ALREADY_RETRACTED, API_KEY_NOT_CURATOR, EMPTY_RELEASE, INVALID_RELEASE, RELEASE_NOT_FOUND } from '../errors/index.js';
import { messages as keyMessages } from './api-key-auth.js';
import { METALINK_TYPE } from '../service/index.js';
import { createRelease, listReleases, MAX_RELEASE_TITLE, MAX_RETRACT_REASON, retractRelease, showRelease, type ReleaseLink, type ServiceContext } from '../service/index.js';
import { RELEASE_FORMATS, RELEASE_KINDS, RELEASE_NUMBER_PATTERN } from '../wire/release.js';
import { text } from './api-schemas.js';
import { callerOf } from './caller.js';
import { envelopeRoute, queryPairs } from './envelope-route.js';

/*
 * Numbered releases (docs/api.md "Releases"): made and retracted by curators, read by anyone
 * (published ones) or any key holder (all). The schemas describe the routes for the OpenAPI
 * document; the service checks every body and parameter, with its own messages.
 */

const summaryProperties = {
  release: { type: 'integer', minimum: 1 },
  title: { type: 'string' },
  description: { type: 'string' },
  kind: { type: 'string', enum: [...RELEASE_KINDS] },
  release_date: { type: 'string', format: 'date-time', description: 'When its files became, or become, public.' },
  created_by: { type: 'string' },
  created_at: { type: 'string', format: 'date-time' },
  status: { type: 'string', enum: ['scheduled', 'published', 'retracted'] },
  file_count: { type: 'integer' },
  bytes: { type: 'integer' },
  retracted_date: { type: 'string', format: 'date-time' },
  retracted_reason: { type: 'string' },
  retracted_by: { type: 'string' },
} as const;

const manifestSchema = {
  type: 'array',
  items: { type: 'object', properties: { file_path: { type: 'string' }, size: { type: 'integer' }, sha256: { type: 'string' } } },
} as const;

const numberParams = {
  type: 'object',
  properties: { n: { type: 'string', pattern: RELEASE_NUMBER_PATTERN, description: 'The release number.', examples: ['1'] } },
} as const;

const security = [{ apiKey: [] }, { bearer: [] }] as { [scheme: string]: string[] }[];

/** A curator route's refusals by key (route-access.ts). */
const curatorRefusals = {
  401: text('No API key was sent.', keyMessages.missing('correct the archive', 'imap')),
  403: text('The key is wrong, revoked, or not a curator key.', API_KEY_NOT_CURATOR.message('swe-pipeline', 'uploader')),
};

const summarySchema = { type: 'object', properties: summaryProperties } as const;

/** What POST /releases answers, made or repeated. */
const createdBody = {
  type: 'object',
  properties: { release: { type: 'integer' }, files: { type: 'integer' }, bytes: { type: 'integer' }, release_date: { type: 'string' }, href: { type: 'string' } },
} as const;

const createSchema = {
  operationId: 'createRelease',
  tags: ['current form'],
  summary: 'Make a numbered release (curator key)',
  description:
    'Its files by list (files: stored paths or names) or by query (GET /query\'s filters; without version, the latest version of each product), ' +
    'less exclude (applied after the latest versions were chosen). A future release_date schedules it.',
  body: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: MAX_RELEASE_TITLE },
      description: { type: 'string' },
      files: { type: 'array', items: { type: 'string' } },
      query: { type: 'object', additionalProperties: { type: 'string' } },
      exclude: { type: 'array', items: { type: 'string' } },
      release_date: { type: 'string', description: 'ISO-8601 date-time with a zone, or YYYYMMDD; default now.' },
      kind: { type: 'string', enum: [...RELEASE_KINDS] },
    },
    required: ['title'],
  },
  response: {
    201: { description: 'Made: its number, file count, bytes, date and address (also in Location).', ...createdBody },
    200: { description: 'Asked for again: the same curator\'s identical release made minutes before (docs/api.md, Releases), answered as when it was made; nothing new made.', ...createdBody },
    400: text('A bad body, files that are unknown or withdrawn (all named), or an empty set.', EMPTY_RELEASE.message()),
    ...curatorRefusals,
  },
  security,
};

const listSchema = {
  operationId: 'listReleases',
  tags: ['current form'],
  summary: 'The releases: published ones for anyone, every one for key holders',
  response: { 200: { description: 'Releases by number, without their manifests.', type: 'array', items: summarySchema } },
};

const showSchema = {
  operationId: 'showRelease',
  tags: ['current form'],
  summary: 'A release and its manifest; or the manifest as CSV or Metalink; or its DataCite description',
  params: numberParams,
  querystring: { type: 'object', properties: { format: { type: 'string', enum: [...RELEASE_FORMATS], default: 'json' } } },
  response: {
    200: {
      description: 'The release with its manifest (files), in file_path order; or the manifest as CSV or Metalink 4; or its DataCite 4 JSON.',
      content: {
        'application/json': { schema: { type: 'object', properties: { ...summaryProperties, files: manifestSchema } } },
        'text/csv; charset=utf-8': { schema: { type: 'string', examples: ['file_path,size,sha256\n'] } },
        [METALINK_TYPE]: { schema: { type: 'string' } },
        'application/vnd.datacite.datacite+json': { schema: { type: 'object', description: 'DataCite Metadata Schema 4, JSON form.' } },
      },
    },
    400: text('A parameter other than format, or a format other than json, csv, metalink, datacite.', 'Invalid format "xml": expected one of json, csv, metalink, datacite.'),
    404: text('No such release, or one the caller may not see (not published yet, or retracted).', RELEASE_NOT_FOUND.message('7')),
  },
};

const retractSchema = {
  operationId: 'retractRelease',
  tags: ['current form'],
  summary: 'Retract a release (curator key): its files return to the team unless another release or the policy makes them public',
  params: numberParams,
  body: { type: 'object', properties: { reason: { type: 'string', minLength: 1, maxLength: MAX_RETRACT_REASON } }, required: ['reason'] },
  response: {
    200: { description: 'The release as it now is, with its manifest.', type: 'object', properties: { ...summaryProperties, files: manifestSchema } },
    400: text('No reason, a blank one, one too long or with a control character, or another member.', INVALID_RELEASE.message('reason must be a non-empty text of at most 1000 characters ...')),
    ...curatorRefusals,
    404: text('No such release.', RELEASE_NOT_FOUND.message('7')),
    409: text('Already retracted.', ALREADY_RETRACTED.message(7, '2026-01-02T03:04:05.000Z', 'curator-1')),
  },
  security,
};

/** The release number of `/releases/{n}...`. */
const numberOf = (request: FastifyRequest): string => (request.params as Record<string, string | undefined>).n ?? '';

export function releaseRoutes(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    // The release's address in answers: under SDC_PUBLIC_URL when set, else relative (public-links.ts).
    const link: ReleaseLink = (n) => `${app.publicUrl ?? ''}/releases/${n}`;
    // The service checks every body and parameter, with its own messages (release-request.ts).
    const options = { attachValidation: true } as const;
    app.post('/releases', { ...options, config: { access: 'curator' }, schema: createSchema }, envelopeRoute(ctx, (c, request) => createRelease(c, request.body, request.apiKeyName ?? '', link)));
    app.get('/releases', { ...options, config: { access: 'read' }, schema: listSchema }, envelopeRoute(ctx, (c, request) => listReleases(c, callerOf(request))));
    app.get(
      '/releases/:n',
      { ...options, config: { access: 'read' }, schema: showSchema },
      envelopeRoute(ctx, (c, request) => showRelease(c, numberOf(request), queryPairs(request.url), callerOf(request), link)),
    );
    app.post(
      '/releases/:n/retract',
      { ...options, config: { access: 'curator' }, schema: retractSchema },
      envelopeRoute(ctx, (c, request) => retractRelease(c, numberOf(request), request.body, request.apiKeyName ?? '')),
    );
  };
}
