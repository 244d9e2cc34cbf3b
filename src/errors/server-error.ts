/**
 * A server error: a stable code (`SDC_...`) clients and logs can match on, the HTTP status
 * it is answered with, and the message (where docs/api.md fixes it: File names and stored paths; Error codes).
 * Every kind is declared once (server-errors.ts); one renderer turns it into an answer
 * (http/error-answer.ts), whichever carrier runs the app.
 */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    /** Headers the answer needs besides the code (Retry-After, Allow, WWW-Authenticate). */
    readonly headers: Readonly<Record<string, string>> = {},
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}

/** One declared kind of error: raise it with `create(...)`, recognise it with `is(err)`. */
export interface ErrorKind<Args extends readonly unknown[]> {
  readonly code: string;
  readonly statusCode: number;
  readonly message: (...args: Args) => string;
  create(...args: Args): ServerError;
  is(err: unknown): err is ServerError;
}

const declared = new Map<string, ErrorKind<never[]>>();

/** Every kind declared so far, in declaration order (for the uniqueness test and docs). */
export function declaredErrors(): readonly ErrorKind<never[]>[] {
  return [...declared.values()];
}

/**
 * Declares one kind of error. A code declared twice, or a status that is not an error
 * status, is a programming mistake: it fails at import time.
 */
export function declareError<Args extends readonly unknown[]>(
  code: string,
  statusCode: number,
  message: (...args: Args) => string,
): ErrorKind<Args> {
  if (!/^SDC_[A-Z0-9_]+$/.test(code)) throw new Error(`error code ${code} must be SDC_ and upper-case words`);
  if (declared.has(code)) throw new Error(`error code ${code} is declared twice`);
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) throw new Error(`error ${code}: status ${statusCode} is not 4xx/5xx`);
  const kind: ErrorKind<Args> = Object.freeze({
    code,
    statusCode,
    message,
    create: (...args: Args) => new ServerError(code, statusCode, message(...args)),
    is: (err: unknown): err is ServerError => err instanceof ServerError && err.code === code,
  });
  declared.set(code, kind as unknown as ErrorKind<never[]>);
  return kind;
}

/** A coded error with headers or a cause: `raise(KIND, [args], { headers, cause })`. */
export function raise<Args extends readonly unknown[]>(
  kind: ErrorKind<Args>,
  args: Args,
  extra: { readonly headers?: Readonly<Record<string, string>>; readonly cause?: unknown } = {},
): ServerError {
  return new ServerError(kind.code, kind.statusCode, kind.message(...args), extra.headers, extra.cause === undefined ? undefined : { cause: extra.cause });
}

/** The answer's content type for every error text: declared here, once. */
export const ERROR_TEXT_TYPE = 'text/plain; charset=utf-8';

/** The header that carries the code (additive: the body stays the spec's text). */
export const ERROR_CODE_HEADER = 'X-Error-Code';

/**
 * A driver's failure (SQLite, PostgreSQL, the S3 SDK, the file system) as the adapter
 * reports it: BACKEND_FAILED with the driver's error as `cause` (so logs keep it, and
 * isOutOfSpace still finds a full disk down the chain). An error already coded passes as it is.
 */
export function backendFailure(backend: string, operation: string, cause: unknown): ServerError {
  if (cause instanceof ServerError) return cause;
  const kind = declared.get('SDC_BACKEND_FAILED') as ErrorKind<[string, string]> | undefined;
  if (!kind) throw new Error('SDC_BACKEND_FAILED is not declared');
  return raise(kind, [backend, operation], { cause });
}

/**
 * One driver call with its failure reported as backendFailure: the one way every adapter wraps
 * (eslint.config.js refuses a hand-written copy). A call that answers at once (better-sqlite3)
 * stays synchronous; a promise's rejection is reported alike. `named`: a failure the adapter
 * names itself (a missing bucket), thrown instead, or undefined.
 */
export function backendCall<T>(backend: string, operation: string, run: () => Promise<T>, named?: (err: unknown) => Error | undefined): Promise<T>;
export function backendCall<T>(backend: string, operation: string, run: () => T, named?: (err: unknown) => Error | undefined): T;
export function backendCall<T>(backend: string, operation: string, run: () => T | Promise<T>, named?: (err: unknown) => Error | undefined): T | Promise<T> {
  const fail = (err: unknown): never => {
    throw named?.(err) ?? backendFailure(backend, operation, err);
  };
  try {
    const out = run();
    return out instanceof Promise ? out.catch(fail) : out;
  } catch (err) {
    return fail(err);
  }
}

/** backendCall for results read one after another (a listing): a failure while reading them is the backend's. */
export async function* backendStream<T>(backend: string, operation: string, items: () => AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* items();
  } catch (err) {
    throw backendFailure(backend, operation, err);
  }
}
