import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrl } from './redact-url.js';

/** A request as the log shows it: method and URL with any signature masked; no headers. */
function serializeRequest(req: { method: string; url: string; id?: string }) {
  return { method: req.method, url: redactUrl(req.url) };
}

/**
 * The service's one logger (pino, JSON lines). Request lines carry the request id;
 * signed addresses appear with their signatures masked.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, serializers: { req: serializeRequest } }, destination);
}
