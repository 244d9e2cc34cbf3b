import type { FastifyInstance } from 'fastify';
import { missionExtensions, type MissionConfig } from '../mission/index.js';
import { coverage, type ServiceContext } from '../service/index.js';
import { queryPairs } from './api-routes.js';
import { sendEnvelope } from './envelope-reply.js';

/** The schema of GET /coverage, built from the mission's values, for the OpenAPI document. */
function coverageSchema(mission: MissionConfig) {
  const date = (text: string) => ({ type: 'string', pattern: '^\\d{8}$', description: text, examples: ['20240105'] });
  return {
    summary: 'Coverage of the archive per instrument and data level',
    description:
      'Spans of consecutive days covered by files, per instrument and data level, for the files that GET /query ' +
      'with the same filters returns; ordered by instrument, data level and start date. A query with a span\'s ' +
      'instrument, data_level, start_date and end_date returns exactly its files. Filters and 400 messages are ' +
      'those of GET /query; its limit, cursor, sort and format are refused.',
    tags: ['portal'],
    querystring: {
      type: 'object',
      properties: {
        instrument: { type: 'string', enum: [...mission.instruments] },
        data_level: { type: 'string', enum: [...mission.dataLevels] },
        descriptor: { type: 'string', pattern: '^[A-Za-z0-9-]+$', examples: ['sci'] },
        start_date: date('Files whose start date is on or after this date, YYYYMMDD.'),
        end_date: date('Files whose start date is on or before this date, YYYYMMDD.'),
        version: {
          type: 'string',
          pattern: '^(v\\d{2}-\\d{2}|\\*|latest)$',
          description: 'vXX-YY, * for any version, or latest for the highest version of each product.',
        },
        extension: { type: 'string', enum: missionExtensions(mission) },
        file_path: { type: 'string', description: 'Stored path or file name of one file.' },
        ingestion_start_date: { type: 'string', description: 'Files indexed at or after this, YYYYMMDD or ISO-8601 date-time.' },
        ingestion_end_date: { type: 'string', description: 'Files indexed at or before this, YYYYMMDD or ISO-8601 date-time.' },
        overlap: { type: 'string', enum: ['true', 'false'], description: 'true: dates select files whose span meets the range.' },
      },
      additionalProperties: false,
    },
    response: {
      200: {
        description: 'Spans, streamed as a JSON array.',
        type: 'array',
        items: {
          type: 'object',
          required: ['instrument', 'data_level', 'start_date', 'end_date', 'files', 'size'],
          properties: {
            instrument: { type: 'string' },
            data_level: { type: 'string' },
            start_date: { type: 'string', description: 'First day covered, YYYYMMDD.' },
            end_date: { type: 'string', description: 'Last day covered (inclusive), YYYYMMDD.' },
            files: { type: 'integer', description: 'Files whose start date lies in the span.' },
            size: { type: 'integer', description: 'Their total size in bytes.' },
          },
        },
      },
      400: { description: 'A JSON string saying which parameter is wrong and what is expected.', type: 'string' },
    },
  };
}

/** GET /coverage: the one aggregate the portal needs beyond the public API. */
export function coverageRoute(ctx: ServiceContext) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get('/coverage', {
      config: { access: 'read' },
      schema: coverageSchema(ctx.mission),
      // The schema documents; parseQueryFilter validates, so messages match GET /query's.
      validatorCompiler: () => () => true,
    }, async (request, reply) => sendEnvelope(reply, coverage(ctx, queryPairs(request.url))));
  };
}
