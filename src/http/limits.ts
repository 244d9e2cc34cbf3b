import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ObjectTooLargeError } from '../store/index.js';
import { sendError } from './error-answer.js';

export interface LimitSettings {
  /** Largest object a PUT may store, bytes. */
  readonly maxObjectSize: number;
  /** Longest time to receive a whole request, body included, seconds. */
  readonly requestTimeout: number;
  /** Longest a connection may stay silent, seconds. */
  readonly idleTimeout: number;
}

/**
 * Request line plus headers, bytes: far more than any real client sends (the longest
 * stored path is well under 1 KiB), small enough that no one can park memory in them.
 * Node answers 431 past it.
 */
const MAX_HEADER_BYTES = 16 * 1024;

/** Headers must arrive within this long, so a client that drips them cannot hold a socket. */
const HEADERS_TIMEOUT_MS = 10_000;

/**
 * How often Node looks for connections past the headers and request timeouts. Its default
 * (30 s) would let a client that drips headers hold a socket three times the 10 s promised.
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** Fastify's server options that bound what a slow or greedy client can hold. */
export function serverLimits(limits: LimitSettings) {
  return {
    connectionTimeout: limits.idleTimeout * 1000,
    requestTimeout: limits.requestTimeout * 1000,
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeout * 1000),
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
  };
}

/**
 * Refuses an upload whose declared Content-Length is over the limit before any of its
 * bytes are read (413, connection closed); chunked uploads are stopped by the store as
 * they pass it. A client that sent `Expect: 100-continue` is told to go on only once
 * every check before the body has passed (size, key, rate): Node would otherwise say
 * `100 Continue` at once, and the client would start sending what is then refused.
 */
async function limitsPlugin(app: FastifyInstance, limits: LimitSettings): Promise<void> {
  app.server.on('checkContinue', (req, res) => app.server.emit('request', req, res));
  // preParsing: after every onRequest check, before anything reads the body.
  // Synchronous hooks: they run on every request.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const expect = request.headers.expect;
    if (expect !== undefined && expect.toLowerCase() === '100-continue') reply.raw.writeContinue();
    done(null, payload);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'PUT') return done();
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limits.maxObjectSize) {
      // Answered here: the chain stops (Fastify ends it once the reply is sent).
      sendError(reply.header('Connection', 'close'), new ObjectTooLargeError(limits.maxObjectSize));
      return;
    }
    done();
  });
}

export default fp(limitsPlugin, { name: 'sdc-limits' });
