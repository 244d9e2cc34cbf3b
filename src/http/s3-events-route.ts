import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ingestCreatedObjects, parseObjectCreatedEvent, type ServiceContext } from '../service/index.js';
import { EVENTS_DISABLED, EVENTS_TOKEN_MISSING, EVENTS_TOKEN_WRONG, NOT_S3_EVENT } from '../errors/index.js';
import { text } from './api-schemas.js';
import { sendError } from './error-answer.js';
import { bearerToken } from './presented-key.js';

const keyList = { type: 'array', items: { type: 'string' } } as const;

/** Route schema: types the answer and describes the endpoint in the OpenAPI document. */
const schema = {
  operationId: 'ingestS3Events',
  tags: ['operations'],
  summary: 'Index objects that were stored straight into the S3 bucket',
  description:
    'For S3-compatible stores that send webhooks (MinIO, Ceph): takes the S3 event notification JSON ({"Records": [...]}) ' +
    'or an EventBridge "Object Created" event, and indexes each announced object that is in the store. Idempotent.',
  headers: {
    type: 'object',
    properties: { authorization: { type: 'string', description: 'Bearer <SDC_EVENTS_TOKEN>', examples: ['Bearer 5d1c...'] } },
  },
  querystring: {
    type: 'object',
    properties: {
      token: { type: 'string', description: 'SDC_EVENTS_TOKEN, for stores whose notifications cannot carry a header (Ceph RGW push-endpoint over http). Masked in logs.' },
    },
  },
  body: { type: 'object', description: 'An S3 event notification or EventBridge event.' },
  response: {
    200: {
      description: 'What became of each announced object.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { indexed: keyList, exists: keyList, skipped: keyList, absent: keyList, refused: keyList, deferred: keyList, ignored: { type: 'integer' } },
            required: ['indexed', 'exists', 'skipped', 'absent', 'refused', 'deferred', 'ignored'],
          },
        },
      },
    },
    400: text('The body is not an S3 object-created event.', 'Expected an S3 event notification ...'),
    401: text('No Bearer token.', EVENTS_TOKEN_MISSING.message()),
    403: text('Wrong token, or the endpoint is disabled.', EVENTS_TOKEN_WRONG.message()),
  },
} as const;

/** Same time whatever the guess, so the token cannot be found a character at a time. */
function sameToken(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * `POST /events/s3`: an S3-compatible store announces stored objects with the S3
 * notification JSON; each is indexed through the one ingest. Authenticated by the
 * shared secret SDC_EVENTS_TOKEN (or SDC_EVENTS_TOKEN_PREVIOUS during a rotation) as a Bearer
 * token, checked before the body is looked at.
 */
export function s3EventsRoute(ctx: ServiceContext, eventsToken: string | undefined, previousToken?: string) {
  return async function (app: FastifyInstance): Promise<void> {
    // onRequest: the credentials are checked before the body is read or parsed.
    const authorize = async (request: FastifyRequest, reply: FastifyReply) => {
      if (!eventsToken) return sendError(reply, EVENTS_DISABLED.create());
      // Ceph RGW's push-endpoint sends no headers of ours (and no password over http): it may carry the token in its URL.
      const inQuery = (request.query as { token?: unknown } | undefined)?.token;
      const given = bearerToken(request.headers.authorization) ?? (typeof inQuery === 'string' && inQuery !== '' ? inQuery : undefined);
      if (given === undefined) return sendError(reply, EVENTS_TOKEN_MISSING.create());
      // While the store's notification is switched to a new token, the previous one is accepted too (docs/deploy.md, Rotation).
      const matches = sameToken(given, eventsToken) || (previousToken !== undefined && sameToken(given, previousToken));
      if (!matches) return sendError(reply, EVENTS_TOKEN_WRONG.create());
      return undefined;
    };
    app.post('/events/s3', { schema, attachValidation: true, config: { access: 'operator' }, onRequest: authorize }, async (request, reply) => {
      const parsed = parseObjectCreatedEvent(request.body);
      if (!parsed.ok) return sendError(reply, NOT_S3_EVENT.create(parsed.message));
      const report = await ingestCreatedObjects(ctx, parsed.created, parsed.ignored);
      return reply.code(200).type('application/json').send(report);
    });
  };
}
