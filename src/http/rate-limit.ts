import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { RATE_LIMITED } from '../errors/index.js';

export interface RateLimitOptions {
  /** Requests per minute per verified API key, or per client address without one; 0 = no limit. */
  readonly perMinute: number;
}

/**
 * The budget a request is counted against: its API key's when the key was verified
 * (api-key-auth.ts runs first), else its client address's. A made-up or revoked key
 * therefore spends the sender's address budget, so key guessing is slowed like any flood.
 */
function budgetOf(request: FastifyRequest): string {
  return request.apiKeyName === undefined ? `ip:${request.ip}` : `key:${request.apiKeyName}`;
}

/**
 * A budget of requests per minute (@fastify/rate-limit, in memory: per instance). It runs
 * on each route's onRequest, after the app-wide key verification and before the key is
 * enforced, so refused key checks are counted too. Over it: 429 with Retry-After and a
 * message saying when to come back.
 */
async function rateLimitPlugin(app: FastifyInstance, { perMinute }: RateLimitOptions): Promise<void> {
  if (perMinute === 0) return;
  await app.register(rateLimit, {
    global: true,
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: budgetOf,
    errorResponseBuilder: (_request, context) => RATE_LIMITED.create(context.max, Math.ceil(context.ttl / 1000)),
  });
}

export default fp(rateLimitPlugin, { name: 'sdc-rate-limit' });
