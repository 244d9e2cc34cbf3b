import { callerOf } from './caller.js';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { INVALID_CHANGES_PARAMETER } from '../errors/index.js';
import { CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT, changesPage, parseChangesRequest, type ServiceContext } from '../service/index.js';
import { FILE_RECORD_ID, text } from './api-schemas.js';
import { queryPairs } from './api-routes.js';
import { sendError } from './error-answer.js';

/** The schema of GET /changes, for the OpenAPI document (docs/api.md "The change log"). */
const changesSchema = {
  operationId: 'changes',
  tags: ['current form'],
  summary: 'The change log: every ingest and withdrawal, oldest first, for harvesters',
  description:
    'Entries after an id, in the order they were committed (ids only grow and are never skipped by a later commit); ' +
    'after=0 replays from the start. GET /events serves the same entries live, with the same ids.',
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      after: { type: 'integer', minimum: 0, default: 0, description: 'Answer the entries with a larger id (the last id seen; 0 = from the start).' },
      limit: { type: 'integer', minimum: 1, maximum: CHANGES_MAX_LIMIT, default: CHANGES_DEFAULT_LIMIT, description: 'At most this many entries.' },
    },
  },
  response: {
    200: {
      description: 'A JSON array of entries, oldest first; [] when none follow.',
      headers: {
        'X-Next-After': { type: 'string', description: 'When the page is full (more may follow): its last id, the next request\'s after.' },
      },
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'time', 'change', 'file_path', 'record'],
        properties: {
          id: { type: 'integer', description: 'The entry\'s id: only grows, in commit order.' },
          time: { type: 'string', format: 'date-time', description: 'When the change was committed, ISO-8601 UTC.' },
          change: { type: 'string', enum: ['created', 'withdrawn', 'released', 'retracted'] },
          file_path: { type: 'string' },
          record: { $ref: `${FILE_RECORD_ID}#`, description: 'The record as the change left it (for a withdrawal, with its tombstone fields).' },
        },
      },
    },
    400: text('after or limit is malformed, repeated or out of range, or another parameter was given.', 'limit=0 is not a whole number from 1 to 10000. GET /changes takes after ...'),
  },
};

/** GET /changes: the change log a page at a time (read class, like /query). */
export function changesRoute(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get('/changes', {
      config: { access: 'read' },
      schema: changesSchema,
      // The schema documents; parseChangesRequest validates, with its own messages.
      validatorCompiler: () => () => true,
    }, async (request, reply) => {
      const parsed = parseChangesRequest(queryPairs(request.url));
      if (!parsed.ok) return sendError(reply, INVALID_CHANGES_PARAMETER.create(parsed.message));
      const page = await changesPage(ctx, parsed.after, parsed.limit, callerOf(request));
      reply.code(200).type('application/json; charset=utf-8');
      if (page.nextAfter !== undefined) reply.header('X-Next-After', String(page.nextAfter));
      return reply.send(Readable.from(page.body, { objectMode: false }));
    });
  };
}
