import { FIXITY_FAILED } from '../errors/index.js';
import { messages as keyMessages } from './api-key-auth.js';
import { FILE_NAME_FORM, exampleFileName, missionExtensions, namingMessage, type MissionConfig } from '../mission/index.js';
import { ALREADY_WITHDRAWN, API_KEY_NOT_CURATOR, FILE_WITHDRAWN, INVALID_WITHDRAWAL, WITHDRAWN_NEEDS_CURATOR } from '../errors/index.js';
import { exampleStoredPath, MAX_WITHDRAW_REASON, messages } from '../service/index.js';
import { ARCHIVE_RECORD_FIELDS, RECORD_FIELD_INFO, RECORD_FIELDS, SPEC_RECORD_FIELDS, TOMBSTONE_FIELDS, type RecordField } from '../wire/record.js';
import { SHA256_HEX_PATTERN } from '../wire/content-digest.js';

/**
 * Route schemas of the two API forms: they type and describe every parameter, status
 * and body, and are the source of the OpenAPI document. They hold no rule of the spec:
 * names are checked by src/mission, queries by parseQueryFilter, and a request a
 * schema refuses is still answered by those rules, with the spec's messages
 * (`attachValidation` on every API route).
 */

export const FILE_RECORD_ID = 'FileRecord';

export const text = (description: string, example: string) => ({
  description,
  content: { 'text/plain': { schema: { type: 'string', examples: [example] } } },
});

export const jsonString = (description: string, example: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'string', examples: [example] } } },
});

/**
 * The record a query answers (docs/api.md, The record), plus what the archive knows of the bytes: every
 * field of the wire record (src/wire/record.ts), in its order, with the mission's values.
 */
export function fileRecordSchema(mission: MissionConfig) {
  const name = exampleFileName(mission);
  const specific: Partial<Record<RecordField, object>> = {
    file_path: { examples: [exampleStoredPath(mission)] },
    instrument: { enum: [...mission.instruments] },
    data_level: { enum: [...mission.dataLevels] },
    descriptor: { examples: ['sci'] },
    start_date: { examples: [name.split('_')[4]] },
    end_date: { examples: [name.split('_')[5]] },
    version: { examples: ['v00-01'] },
    extension: { enum: missionExtensions(mission) },
    ingestion_date: { format: 'date-time' },
    size: { minimum: 0 },
    uploader: { examples: ['swe-pipeline'] },
  };
  const properties = Object.fromEntries(
    RECORD_FIELDS.map((field) => {
      const { type, description } = RECORD_FIELD_INFO[field];
      return [field, { type, description, ...specific[field] }];
    }),
  );
  return {
    $id: FILE_RECORD_ID,
    type: 'object',
    description: `Metadata of one stored file (docs/api.md, The record), then ${ARCHIVE_RECORD_FIELDS.join(', ')}.`,
    properties,
    required: [...SPEC_RECORD_FIELDS],
  } as const;
}

/** The wildcard tail of a route; named `path` in the OpenAPI document (openapi.ts). */
function pathParams(description: string, example: string) {
  const slashes = ' Its slashes may be sent as they are or encoded as %2F.';
  return { type: 'object', properties: { '*': { type: 'string', description: description + slashes, examples: [example] } } } as const;
}

/** GET /upload's one parameter (docs/api.md, "Checked transfers"). */
const uploadQuery = {
  type: 'object',
  properties: {
    sha256: {
      type: 'string',
      pattern: SHA256_HEX_PATTERN,
      description:
        "The file's SHA-256 (64 hexadecimal digits). The address is then bound to those bytes: other bytes are refused " +
        '(400, SDC_DIGEST_MISMATCH, on the local store; on S3 the upload is never promoted) and the name stays free. `sdc upload` always sends it.',
      examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    },
  },
} as const;

export function uploadSchema(mission: MissionConfig, form: 'current' | 'earlier') {
  const path = exampleStoredPath(mission);
  const refusal = namingMessage('instrument', mission);
  return {
    operationId: form === 'current' ? 'upload' : 'uploadEarlierForm',
    tags: [form === 'current' ? 'current form' : 'earlier form'],
    summary: 'Get a pre-signed upload address for a science file',
    description:
      `The file name must follow ${FILE_NAME_FORM}. PUT the bytes to the returned address within its lifetime ` +
      '(SDC_UPLOAD_TTL); the file becomes queryable once stored. A file that is already stored is refused (409).',
    params: pathParams(`Stored path of the file (${path}), or its bare file name.`, path),
    ...(form === 'current' ? { querystring: uploadQuery } : {}),
    response: {
      200: jsonString('The signed PUT address.', `https://data.example.org/store/${path}?expires=1767225600&signature=...`),
      400: form === 'current'
          ? text('The name breaks a naming rule (docs/api.md, File names and stored paths), or sha256 is not 64 hexadecimal digits; the text says which.', refusal)
          : text('No pre-signed address: the name breaks a naming rule; the text says which.', messages.presignRefused(refusal)),
      409: text('The file is already stored.', messages.alreadyExists(path)),
      ...keyResponses(mission),
    },
    // A key is needed once the archive has issued any (docs/trust.md); until then uploads are open.
    security: [{ apiKey: [] }, { bearer: [] }, {}] as { [scheme: string]: string[] }[],
  };
}

/** What an operation that may need an API key also answers (api-key-auth.ts, rate-limit.ts). */
function keyResponses(mission: MissionConfig) {
  return {
    401: text('No API key was sent, and this archive needs one here.', keyMessages.missing('upload files', mission.name)),
    403: text('The API key is wrong or revoked; the text says which.', keyMessages.invalid()),
    429: text('Too many requests from this key or address; Retry-After says when to try again.', 'Rate limit exceeded, retry in 1 minute'),
  };
}

export function downloadSchema(mission: MissionConfig, form: 'current' | 'earlier') {
  const path = exampleStoredPath(mission);
  const url = `https://data.example.org/store/${path}?expires=1767225600&signature=...`;
  return {
    operationId: form === 'current' ? 'download' : 'downloadEarlierForm',
    tags: [form === 'current' ? 'current form' : 'earlier form'],
    summary: 'Redirect to a signed address of a stored file',
    description: 'HEAD answers the same status and headers without a body.',
    params: pathParams(`Stored path of the file (${path}), or its bare file name.`, path),
    response: {
      302: {
        description: 'Found: Location is a signed, followable address of the bytes (SDC_DOWNLOAD_TTL).',
        headers: {
          Location: { type: 'string', description: 'Signed address of the bytes.' },
          'X-Download-Expires': {
            type: 'string',
            format: 'date-time',
            description: 'Only when the address dies before SDC_DOWNLOAD_TTL (S3: the credentials that signed it expire then): when it does, UTC.',
          },
        },
        content: {
          'text/html': {
            schema: { type: 'object', properties: { download_url: { type: 'string', examples: [url] } }, required: ['download_url'] },
          },
        },
      },
      400:
        form === 'current'
          ? text('No file name in the path, or the name breaks a naming rule.', messages.noFileInPath())
          : text('Not a valid object-store URI (no file name, or the name breaks a naming rule).', messages.notObjectStoreUri('', messages.noFileInPath())),
      404: text('No such file.', messages.notFound(path, mission)),
      409: text(
        'The last fixity audit found the stored bytes changed or gone (the record says fixity mismatch or missing): never served as if good, until an operator restores them and an audit finds them whole.',
        FIXITY_FAILED.create(path, '2026-01-01T02:00:00.000Z', 'mismatch').message,
      ),
      ...(form === 'current'
        ? {
            403: text('withdrawn=include without a curator key.', WITHDRAWN_NEEDS_CURATOR.message()),
            410: {
              description: 'Gone: the file was withdrawn (docs/api.md "Withdrawn files"). The text names the date, the reason and the replacement.',
              headers: { Link: { type: 'string', description: 'When superseded: </download/<new path>>; rel="successor-version".' } },
              content: { 'text/plain': { schema: { type: 'string', examples: [FILE_WITHDRAWN.message(path, '2026-01-02T03:04:05.000Z', 'wrong calibration table', undefined)] } } },
            },
          }
        : {}),
    },
    ...(form === 'current'
      ? {
          querystring: {
            type: 'object',
            properties: {
              withdrawn: {
                type: 'string',
                enum: ['include'],
                description: 'include: a curator key reads the kept bytes of a withdrawn file (302, as for any file); others get 410.',
              },
            },
          },
        }
      : {}),
  };
}

/** POST /withdraw/{path} (docs/api.md "Withdrawn files"). */
export function withdrawSchema(mission: MissionConfig) {
  const path = exampleStoredPath(mission);
  return {
    operationId: 'withdraw',
    tags: ['current form'],
    summary: 'Withdraw an archived file, leaving a tombstone (curator key)',
    description:
      `The record keeps every field and gains ${['status', ...TOMBSTONE_FIELDS].join(', ').replace(/, (?=[^,]*$)/, ' and ')}. ` +
      'Queries leave it out unless status=withdrawn|any; its download answers 410; its name is never reused. ' +
      'version=latest falls back to the next archived version.',
    params: pathParams(`Stored path of the file (${path}), or its bare file name.`, path),
    body: {
      type: 'object',
      properties: {
        reason: { type: 'string', minLength: 1, maxLength: MAX_WITHDRAW_REASON, description: 'Why, in words (required).' },
        superseded_by: { type: 'string', minLength: 1, description: 'Stored path or file name of the replacement: an archived file.' },
      },
      required: ['reason'],
      // No additionalProperties: false here: Fastify's validator would strip an unknown member
      // silently; the service refuses it by name (parseWithdrawBody).
    },
    response: {
      200: { description: 'The record as it now is.', content: { 'application/json': { schema: { $ref: `${FILE_RECORD_ID}#` } } } },
      400: text('No reason, a reason too long, an unknown member, or a superseded_by that is not an archived file; the text says which.', INVALID_WITHDRAWAL.message('A withdrawal needs a reason ...')),
      401: text('No API key was sent.', keyMessages.missing('correct the archive', mission.name)),
      403: text('The key is wrong, revoked, or not a curator key.', API_KEY_NOT_CURATOR.message('swe-pipeline', 'uploader')),
      404: text('No such file.', messages.notFound(path, mission)),
      409: text('The file is already withdrawn.', ALREADY_WITHDRAWN.message(path, '2026-01-02T03:04:05.000Z', 'curator-1')),
    },
    security: [{ apiKey: [] }, { bearer: [] }] as { [scheme: string]: string[] }[],
  };
}
