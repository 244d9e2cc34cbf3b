import { ServerError, raise } from './server-error.js';
import { CATALOG_BUSY, CATALOG_UNAVAILABLE, STORE_UNAVAILABLE } from './server-errors.js';

/** What a client is told to wait before it retries an operation a dependency refused (seconds). */
export const RETRY_AFTER_SECONDS = 5;

/** Socket errors that mean "the peer cannot be reached just now", whichever driver saw them. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * PostgreSQL's SQLSTATEs for a server that is going away or not there: class 08 (connection
 * exception), 57P01-57P03 (terminated by an administrator, crash shutdown, cannot connect now),
 * 53300 (too many connections).
 */
const POSTGRES_GONE = /^(08...|57P0[1-3]|53300)$/;

/** pg's own texts for a connection that ended or never came (it gives them no code). */
const PG_CONNECTION_TEXT = /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed and is not queryable|Connection ended unexpectedly/i;

/** pg-pool's text when no client came free within connectionTimeoutMillis. */
const POOL_TIMEOUT_TEXT = /timeout exceeded when trying to connect/i;

type Link = Error & { code?: unknown; $metadata?: { httpStatusCode?: number }; cause?: unknown };

/** The error and its causes, outermost first (bounded: a cycle cannot hang it). */
function chain(err: unknown): Link[] {
  const links: Link[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = (e as Link).cause, depth++) links.push(e as Link);
  return links;
}

function isNetworkFailure(link: Link): boolean {
  if (typeof link.code === 'string' && NETWORK_CODES.has(link.code)) return true;
  // AggregateError (Node's happy eyeballs): every address refused.
  const inner = (link as { errors?: unknown[] }).errors;
  return Array.isArray(inner) && inner.some((e) => e instanceof Error && isNetworkFailure(e as Link));
}

/**
 * The store's credentials are missing, expired or no longer accepted: no provider could give any
 * (the SDK's CredentialsProviderError: no environment keys, the instance metadata service not
 * answering), or S3 refused the key itself. The store is out of reach until the operator (or the
 * credential source) fixes it: 503, as for a store that is down, never a 500 (docs/deploy.md
 * "Storage credentials"). A refusal of one object (AccessDenied) is not this: it stays a 500.
 */
const CREDENTIALS_REFUSED = new Set(['CredentialsProviderError', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'TokenRefreshRequired']);

/** An S3 SDK error (it carries $metadata) that says the store is down or overloaded, or out of reach for want of credentials. */
function isStoreOutage(link: Link): boolean {
  if (link.name === 'CredentialsProviderError') return true;
  if (link.$metadata === undefined) return false;
  if (CREDENTIALS_REFUSED.has(link.name)) return true;
  const status = link.$metadata.httpStatusCode;
  return status === undefined || status >= 500 || link.name === 'TimeoutError' || isNetworkFailure(link);
}

/**
 * The 503 a failure calls for when a dependency is down or busy, or undefined when it is
 * something else (a bug, a bad row: those stay 500). Which dependency: an S3 SDK error is
 * the store's; a PostgreSQL one (SQLSTATE, pg's connection texts, a socket error under the
 * catalog's BACKEND_FAILED) the catalog's. docs/api.md lists the codes; docs/reliability.md
 * says what clients do with them.
 */
export function unavailableError(err: unknown): ServerError | undefined {
  const links = chain(err);
  const retry = { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) }, cause: err };
  const under = (backend: string) => links.some((l) => l instanceof ServerError && l.message.startsWith(backend));
  if (links.some(isStoreOutage) || (under('S3 store') && links.some(isNetworkFailure))) {
    return raise(STORE_UNAVAILABLE, [RETRY_AFTER_SECONDS], retry);
  }
  // pg-pool found no free client in time; SQLite stayed locked by another writer past busy_timeout.
  const busy = (l: Link) => POOL_TIMEOUT_TEXT.test(l.message) || l.code === 'SQLITE_BUSY' || l.code === 'SQLITE_LOCKED';
  if (links.some(busy)) return raise(CATALOG_BUSY, [RETRY_AFTER_SECONDS], retry);
  const catalogGone = links.some(
    (l) =>
      (typeof l.code === 'string' && POSTGRES_GONE.test(l.code)) ||
      PG_CONNECTION_TEXT.test(l.message) ||
      // A reset socket is the catalog's only under its failure (a client that hung up resets one too).
      (isNetworkFailure(l) && (under('PostgreSQL catalog') || (l as { syscall?: string }).syscall === 'connect')),
  );
  return catalogGone ? raise(CATALOG_UNAVAILABLE, [RETRY_AFTER_SECONDS], retry) : undefined;
}
