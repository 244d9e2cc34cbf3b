import { ERROR_CODE_HEADER, type ServerError } from './server-error.js';

/** What an error is answered with, whichever carrier sends it. */
export interface ErrorReply {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The one rule that turns an error into its answer: its status, `headers` (the answer's
 * Content-Type), the error's own headers (Retry-After, Allow, WWW-Authenticate), its code in
 * X-Error-Code (none for an error without one) and its text as the body, byte for byte
 * (docs/api.md). Used by the HTTP layer (http/error-answer.ts), the service's envelopes
 * (service/envelope.ts) and the Lambda's too-large answer (lambda/collect-body.ts).
 */
export function errorReply(error: ServerError, headers: Readonly<Record<string, string>> = {}): ErrorReply {
  const code: Record<string, string> = error.code ? { [ERROR_CODE_HEADER]: error.code } : {};
  // nosniff: the text is served as text, never sniffed into markup (docs/api.md, "Error codes").
  return { statusCode: error.statusCode, headers: { ...headers, 'X-Content-Type-Options': 'nosniff', ...error.headers, ...code }, body: error.message };
}
