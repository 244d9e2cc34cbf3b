// No Node import here: the portal bundles this module (web/build.js).

/**
 * The SDK's typed errors, declared once. Each carries a code a program can switch on
 * and, when the server answered, its status, its message word for word and its own
 * code (`serverCode`, the X-Error-Code header: docs/api.md lists them).
 */
export type ClientErrorCode =
  | 'InvalidName'
  | 'InvalidQuery'
  | 'InvalidRequest'
  | 'Withdrawn'
  | 'NotFound'
  | 'Conflict'
  | 'Denied'
  | 'Server'
  | 'Network'
  | 'Busy'
  | 'Unreachable'
  | 'Integrity'
  | 'BadResponse'
  | 'LocalFile';

/** What an error may carry besides its message: the cause, and the server's X-Error-Code. */
export interface ClientErrorOptions extends ErrorOptions {
  readonly serverCode?: string;
}

export abstract class ClientError extends Error {
  abstract readonly code: ClientErrorCode;
  /** Worth trying again: a network failure or a 5xx, never a 4xx. */
  readonly retryable: boolean = false;
  /**
   * The server's code for the failure (X-Error-Code, e.g. `SDC_NAME_TAKEN`; docs/api.md)
   * when it sent one; `code` is the SDK's own kind of error, the same on every server.
   */
  readonly serverCode?: string;

  constructor(
    message: string,
    /** HTTP status when the server answered. */
    readonly status?: number,
    options?: ClientErrorOptions,
  ) {
    super(message, options);
    if (options?.serverCode) this.serverCode = options.serverCode;
  }
}

/** The name breaks the mission's naming convention (local check or the server's 400). */
export class InvalidNameError extends ClientError {
  override name = 'InvalidNameError';
  readonly code = 'InvalidName';
}

/** The server refused the query parameters (400). */
export class InvalidQueryError extends ClientError {
  override name = 'InvalidQueryError';
  readonly code = 'InvalidQuery';
}

/**
 * The service refused an answer too large to send at once (`X-Error-Code:
 * SDC_ANSWER_TOO_LARGE`, the Lambda carrier): `records()` then asks for it page by page.
 */
export class AnswerTooLargeError extends InvalidQueryError {
  override name = 'AnswerTooLargeError';
}

/** A request the service refused as malformed (400) that names no file nor query: a withdrawal's body, say. */
export class InvalidRequestError extends ClientError {
  override name = 'InvalidRequestError';
  readonly code = 'InvalidRequest';
}

/** The file was withdrawn (410, docs/api.md "Withdrawn files"): the message names the date, reason and replacement. */
export class WithdrawnError extends ClientError {
  override name = 'WithdrawnError';
  readonly code = 'Withdrawn';
}

export class NotFoundError extends ClientError {
  override name = 'NotFoundError';
  readonly code = 'NotFound';
}

/** The file is already in the archive (409): files are never overwritten. */
export class ConflictError extends ClientError {
  override name = 'ConflictError';
  readonly code = 'Conflict';
}

/**
 * Upload of a name the archive already holds with other bytes: a real conflict (files are
 * never replaced). Both digests say which copy is which; see docs/client.md, "Re-runs".
 */
export class ContentConflictError extends ConflictError {
  override name = 'ContentConflictError';

  constructor(
    readonly path: string,
    readonly localSha256: string,
    readonly archivedSha256: string | undefined,
  ) {
    super(
      `${path} is already archived with other bytes: archived SHA-256 ${archivedSha256 ?? 'unknown'}, ` +
        `local SHA-256 ${localSha256}. Archived files are never replaced: upload a new version instead.`,
      409,
    );
  }
}

/** 401 or 403: a missing or wrong API key, or an expired signed address. */
class DeniedError extends ClientError {
  override name = 'DeniedError';
  readonly code = 'Denied';
}

/** 5xx after every retry. */
class ServerError extends ClientError {
  override name = 'ServerError';
  readonly code = 'Server';
  override readonly retryable = true;
}

/** No answer: refused, reset, timed out, cut in the middle. */
export class NetworkError extends ClientError {
  override name = 'NetworkError';
  readonly code = 'Network';
  override readonly retryable = true;
}

/**
 * The service asked to come back later (429, or 503 with Retry-After) for longer than the
 * client's bound on such waits (`maxBusyWaitMs`), or on a request it could not replay.
 * Retried without counting as a failed attempt (retry.ts) until that bound.
 */
export class BusyError extends ClientError {
  override name = 'BusyError';
  readonly code = 'Busy';
  override readonly retryable = true;

  constructor(
    message: string,
    status: number,
    /** How long the service asked to wait, ms. */
    readonly waitMs: number,
    serverCode?: string,
  ) {
    super(message, status, { serverCode });
  }
}

/**
 * Connections to the service failed several times in a row over several seconds (see
 * http-transport.ts): every further request of this client fails at once with this error
 * rather than each file trying on its own. Not retried.
 */
export class UnreachableError extends ClientError {
  override name = 'UnreachableError';
  readonly code = 'Unreachable';
}

/** Downloaded bytes differ from the size or SHA-256 the catalog holds. */
export class IntegrityError extends ClientError {
  override name = 'IntegrityError';
  readonly code = 'Integrity';
}

/** The server answered something this client does not understand. */
export class BadResponseError extends ClientError {
  override name = 'BadResponseError';
  readonly code = 'BadResponse';
}

/** A local file that cannot be used: missing, unreadable, outside the data directory. */
export class LocalFileError extends ClientError {
  override name = 'LocalFileError';
  readonly code = 'LocalFile';
}

/** The operation a status came from decides what a 400 means. */
export type Operation = 'upload' | 'download' | 'query' | 'transfer' | 'withdraw' | 'release';

/** The typed error for a status the server answered with, carrying its message and its X-Error-Code. */
export function errorForStatus(operation: Operation, status: number, message: string, serverCode?: string): ClientError {
  const text = message.trim().slice(0, 500) || `HTTP ${status}`;
  const coded = { serverCode };
  if (status === 400 && operation === 'transfer') return new BadResponseError(`the object store refused the request (400): ${text}`, status, coded);
  if (status === 400 && (operation === 'withdraw' || operation === 'release')) return new InvalidRequestError(text, status, coded);
  if (status === 400) return operation === 'query' ? new InvalidQueryError(text, status, coded) : new InvalidNameError(text, status, coded);
  if (status === 410) return new WithdrawnError(text, status, coded);
  if (status === 401 || status === 403) return new DeniedError(text, status, coded);
  if (status === 404) return new NotFoundError(text, status, coded);
  // 412: S3's answer to a conditional PUT (If-None-Match: *) of a key that is taken.
  if (status === 409 || status === 412) return new ConflictError(text, status, coded);
  if (status === 429) return new BusyError(`the service asks to slow down (429): ${text}`, status, 1000, serverCode);
  if (status >= 500) return new ServerError(`server error ${status}: ${text}`, status, coded);
  return new BadResponseError(`unexpected answer ${status}: ${text}`, status, coded);
}

/** The text of an error answer: a JSON string (the API's refusals) decoded, anything else as sent. */
export function errorText(body: string, contentType: string | null | undefined): string {
  if ((contentType ?? '').startsWith('application/json')) {
    try {
      const value: unknown = JSON.parse(body);
      if (typeof value === 'string') return value;
    } catch {
      // not JSON after all: show it as sent
    }
  }
  return body;
}

/** Any failure below the HTTP layer (undici, sockets, timeouts) as a NetworkError. */
export function asClientError(err: unknown, what: string): ClientError {
  if (err instanceof ClientError) return err;
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  const detail = e.code ?? e.cause?.code ?? e.message;
  return new NetworkError(`${what}: ${detail}`, undefined, { cause: err });
}
