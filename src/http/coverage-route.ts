import { callerOf } from './caller.js';
import type { FastifyInstance } from 'fastify';
import type { MissionConfig } from '../mission/index.js';
import { coverage, type ServiceContext } from '../service/index.js';
import { ANSWER_PARAMETERS, QUERY_FILTERS } from '../wire/query.js';
import { queryPairs } from './api-routes.js';
import { sendEnvelope } from './envelope-reply.js';
import { parameterProperties } from './query-schemas.js';

/** The schema of GET /coverage, for the OpenAPI document: /query's filters (src/wire/query.ts), the mission's values. */
function coverageSchema(mission: MissionConfig) {
  return {
    summary: 'Coverage of the archive per instrument and data level',
    description:
      'Spans of consecutive days covered by files, per instrument and data level, for the files that GET /query ' +
      'with the same filters returns; ordered by instrument, data level and start date. A query with a span\'s ' +
      'instrument, data_level, start_date and end_date returns exactly its files. Filters and 400 messages are ' +
      `those of GET /query; its ${ANSWER_PARAMETERS.slice(0, -1).join(', ')} and ${ANSWER_PARAMETERS.at(-1)} are refused.`,
    tags: ['portal'],
    querystring: { type: 'object', properties: parameterProperties(mission, QUERY_FILTERS), additionalProperties: false },
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
    }, async (request, reply) => sendEnvelope(reply, coverage(ctx, queryPairs(request.url), callerOf(request))));
  };
}
