import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { RATE_LIMITED, raise } from '../errors/index.js';
import { clientAddress } from './client-address.js';

export interface RateLimitOptions {
  /** Requests per minute per verified API key, or per client address without one; 0 = no limit. */
  readonly perMinute: number;
  /** Requests that spend no budget (validly signed store addresses: store-routes.ts). */
  readonly exempt?: (request: FastifyRequest) => boolean;
}

/** The window of a budget, ms. */
const WINDOW_MS = 60_000;

/** Budgets remembered at most (the least recently used goes first), as @fastify/rate-limit's in-memory store. */
const BUDGETS = 5000;

/**
 * The budget a request is counted against: its API key's when the key was verified
 * (api-key-auth.ts runs first), else its client address's. A made-up or revoked key
 * therefore spends the sender's address budget, so key guessing is slowed like any flood.
 */
function budgetOf(request: FastifyRequest): string {
  return request.apiKeyName === undefined ? `ip:${clientAddress(request)}` : `key:${request.apiKeyName}`;
}

/** One budget's window: requests counted since it began. */
interface Window {
  count: number;
  start: number;
}

/**
 * A budget of requests per minute, in memory (per instance): a fixed window of a minute per
 * budget, begun by its first request. Each answer says `x-ratelimit-limit`, `-remaining`
 * and `-reset` (seconds until the window ends); over the budget: 429 with `Retry-After`
 * and a message saying when to come back. The same answers and accounting as
 * @fastify/rate-limit's in-memory store (which this replaced: its hook made four promises a
 * request), in one synchronous hook.
 *
 * The hook is app-wide: after the key verification and before the key is enforced, so
 * refused key checks are counted too, and every answer, whatever the route, spends a budget.
 */
async function rateLimitPlugin(app: FastifyInstance, { perMinute, exempt }: RateLimitOptions): Promise<void> {
  if (perMinute === 0) return;
  const max = perMinute;
  const windows = new Map<string, Window>();

  const limit: onRequestHookHandler = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    if (exempt?.(request)) return done();
    const budget = budgetOf(request);
    const now = Date.now();
    let window = windows.get(budget);
    if (window === undefined) {
      window = { count: 0, start: now };
      if (windows.size >= BUDGETS) windows.delete(windows.keys().next().value!);
    } else {
      // Most recently used last: the first key of the map is the one to forget.
      windows.delete(budget);
      if (window.start + WINDOW_MS <= now) {
        window.count = 0;
        window.start = now;
      }
    }
    windows.set(budget, window);
    const count = ++window.count;
    const reset = Math.ceil((WINDOW_MS - (now - window.start)) / 1000);
    reply.header('x-ratelimit-limit', max);
    if (count <= max) {
      reply.header('x-ratelimit-remaining', max - count);
      reply.header('x-ratelimit-reset', reset);
      return done();
    }
    reply.header('x-ratelimit-remaining', 0);
    reply.header('x-ratelimit-reset', reset);
    // Retry-After goes with the error, set by errorReply (src/errors/error-reply.ts) as for every error.
    done(raise(RATE_LIMITED, [max, reset], { headers: { 'Retry-After': String(reset) } }));
  };

  // App-wide (this plugin is not encapsulated), after the key verification's own hook: every
  // route spends the budget, those registered before this plugin (metrics, the API
  // description, CORS preflights: cors.ts lets them on) and the answers of no route (404, 405) included.
  app.addHook('onRequest', limit);
}

export default fp(rateLimitPlugin, { name: 'sdc-rate-limit' });
