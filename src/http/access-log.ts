import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { clientAddress } from './client-address.js';
import { RequestLog } from './request-log.js';
import { traceIdOf } from '../tracing/request-tracing.js';

/**
 * One log line per request, when its response is sent: method, URL (signatures masked
 * by the logger's serializer), the client's address (behind trusted proxies, the one they
 * forwarded: client-address.ts), status, time and trace id (request-tracing.ts). Fastify's default is two lines (incoming
 * and completed), which doubles the logging cost of every request. The line of an answered
 * request is written by the request's logger itself (request-log.ts: no pino child made for it).
 */
export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const log = reply.log as unknown;
    const client = clientAddress(request);
    const traceId = traceIdOf(request);
    if (!error && log instanceof RequestLog && log.accessLine(request.method, request.url, client, reply.statusCode, reply.elapsedTime, traceId)) return;
    const line = { req: { method: request.method, url: request.url, remoteAddress: client }, res: reply, responseTime: reply.elapsedTime, traceId };
    // A client that hung up is a fact of life, not an error of ours: no stack trace for it.
    if (error && request.raw.destroyed) reply.log.info({ ...line, aborted: error.message }, 'request aborted by the client');
    else if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request');
  }
}
