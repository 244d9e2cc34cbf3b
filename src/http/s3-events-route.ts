import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ingestCreatedObjects, parseObjectCreatedEvent, type ServiceContext } from '../service/index.js';

const keyList = { type: 'array', items: { type: 'string' } } as const;
const textReply = { type: 'string' } as const;

/** What `POST /events/s3` answers: the ingest report. */
const reportSchema = {
  type: 'object',
  properties: { indexed: keyList, exists: keyList, skipped: keyList, absent: keyList, ignored: { type: 'integer' } },
  required: ['indexed', 'exists', 'skipped', 'absent', 'ignored'],
} as const;

/** Same time whatever the guess, so the token cannot be found a character at a time. */
function sameToken(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * `POST /events/s3`: an S3-compatible store (MinIO, Ceph, ...) announces stored
 * objects with the S3 notification JSON; each is indexed through the one ingest.
 * Authenticated by the shared secret SDC_EVENTS_TOKEN as a Bearer token.
 */
export function s3EventsRoute(ctx: ServiceContext, eventsToken: string | undefined) {
  return async function (app: FastifyInstance): Promise<void> {
    app.post(
      '/events/s3',
      {
        schema: {
          summary: 'Index objects that were stored straight into the S3 bucket',
          description:
            'Takes an S3 event notification ({"Records": [...]}, as S3 and MinIO webhooks send it) or an EventBridge "Object Created" event. Requires Authorization: Bearer <SDC_EVENTS_TOKEN>.',
          tags: ['events'],
          headers: { type: 'object', properties: { authorization: { type: 'string' } } },
          body: { type: 'object' },
          response: { 200: reportSchema, 400: textReply, 401: textReply, 403: textReply },
        },
      },
      async (request, reply) => {
        reply.type('text/plain; charset=utf-8');
        if (!eventsToken) {
          return reply.code(403).send('POST /events/s3 is disabled on this server: start it with SDC_EVENTS_TOKEN set to a shared secret.');
        }
        const header = request.headers.authorization;
        const match = header ? /^Bearer (.+)$/i.exec(header) : null;
        if (!match) return reply.code(401).send('Missing credentials: send the header Authorization: Bearer <SDC_EVENTS_TOKEN>.');
        if (!sameToken(match[1]!, eventsToken)) return reply.code(403).send('The Bearer token does not match this server\'s SDC_EVENTS_TOKEN.');

        const parsed = parseObjectCreatedEvent(request.body);
        if (!parsed.ok) return reply.code(400).send(parsed.message);
        const report = await ingestCreatedObjects(ctx, parsed.created, parsed.ignored);
        return reply.code(200).type('application/json').send(report);
      },
    );
  };
}
