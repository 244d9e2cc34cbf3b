import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { keyTag, presentedKey } from './presented-key.js';

export interface RateLimitOptions {
  /** Requests per minute per API key, or per client address without one; 0 = no limit. */
  readonly perMinute: number;
}

/**
 * A budget of requests per minute for each API key, or for each client address when no
 * key is sent (@fastify/rate-limit, in memory: per instance). Over it: 429 with
 * Retry-After and a message saying when to come back.
 */
async function rateLimitPlugin(app: FastifyInstance, { perMinute }: RateLimitOptions): Promise<void> {
  if (perMinute === 0) return;
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => {
      const key = presentedKey(request);
      return key === undefined ? `ip:${request.ip}` : `key:${keyTag(key)}`;
    },
    errorResponseBuilder: (_request, context) =>
      Object.assign(
        new Error(
          `Too many requests: at most ${context.max} a minute per API key (or per address without one). Retry after ${Math.ceil(context.ttl / 1000)} s.`,
        ),
        { statusCode: 429 },
      ),
  });
}

export default fp(rateLimitPlugin, { name: 'sdc-rate-limit' });
