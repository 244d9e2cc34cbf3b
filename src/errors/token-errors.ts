import { declareError, raise, type ErrorKind, type ServerError } from './server-error.js';
import { RETRY_AFTER_SECONDS } from './unavailable.js';

/**
 * Refusals of a Bearer token from the institution's OpenID Connect provider (docs/trust.md,
 * "Signed-in callers"; codes in docs/api.md): each cause its own code, all 401 with
 * `WWW-Authenticate: Bearer error="invalid_token"` (the client signs in again), except a
 * valid token whose role does not allow the call (403) and a provider that cannot be reached (503).
 */
const SIGN_IN_AGAIN = 'Sign in again (sdc login, or Sign in on the portal).';

export const TOKEN_MALFORMED = declareError('SDC_TOKEN_MALFORMED', 401, () => `The Bearer token is not a well-formed JWT (three base64url parts: header, claims, signature). ${SIGN_IN_AGAIN}`);
export const TOKEN_TOO_LARGE = declareError('SDC_TOKEN_TOO_LARGE', 401, (limit: number) => `The Bearer token is longer than ${limit} characters, more than any token of this archive's provider. ${SIGN_IN_AGAIN}`);
export const TOKEN_ALG_NOT_ALLOWED = declareError(
  'SDC_TOKEN_ALG_NOT_ALLOWED',
  401,
  (alg: string, allowed: readonly string[]) => `The Bearer token is signed with ${JSON.stringify(alg)}, which this archive does not accept: only ${allowed.join(', ')}.`,
);
export const TOKEN_UNKNOWN_KEY = declareError(
  'SDC_TOKEN_UNKNOWN_KEY',
  401,
  () => `The Bearer token names a signing key (kid) that the provider does not publish. ${SIGN_IN_AGAIN}`,
);
export const TOKEN_BAD_SIGNATURE = declareError('SDC_TOKEN_BAD_SIGNATURE', 401, () => `The Bearer token's signature does not verify with the provider's key. ${SIGN_IN_AGAIN}`);
export const TOKEN_WRONG_ISSUER = declareError(
  'SDC_TOKEN_WRONG_ISSUER',
  401,
  (issuer: string) => `The Bearer token was not issued by this archive's provider (${issuer}). Sign in with that provider.`,
);
export const TOKEN_WRONG_AUDIENCE = declareError(
  'SDC_TOKEN_WRONG_AUDIENCE',
  401,
  (audience: string) => `The Bearer token is not meant for this archive: its audience (aud) does not include ${audience}.`,
);
export const TOKEN_EXPIRED = declareError('SDC_TOKEN_EXPIRED', 401, () => `The Bearer token has expired. Refresh it, or ${SIGN_IN_AGAIN.toLowerCase()}`);
export const TOKEN_NOT_YET_VALID = declareError(
  'SDC_TOKEN_NOT_YET_VALID',
  401,
  () => "The Bearer token is not valid yet (nbf lies ahead). Check the clock of the machine that requested it.",
);
export const TOKEN_ROLES_CLAIM_INVALID = declareError(
  'SDC_TOKEN_ROLES_CLAIM_INVALID',
  401,
  (claim: string) => `The Bearer token's ${claim} claim is not a list of strings. Ask the provider's administrators to map it as a list (a multivalued claim).`,
);
export const TOKEN_NAME_INVALID = declareError(
  'SDC_TOKEN_NAME_INVALID',
  401,
  (claim: string) =>
    `The Bearer token names no caller this archive can record: ${claim} (or sub) must be 1-128 letters, digits, '.', '_', '@', '+' or '-'.`,
);
export const TOKEN_ROLE_REFUSED = declareError(
  'SDC_TOKEN_ROLE_REFUSED',
  403,
  (name: string, role: string | undefined, needed: string) =>
    `You are signed in as ${name} ${role === undefined ? 'with no role in this archive' : `with the role ${role}`}: this call needs ${needed}. Ask the archive's operators to add you to the group that grants it.`,
);
export const OIDC_UNAVAILABLE = declareError(
  'SDC_OIDC_UNAVAILABLE',
  503,
  (retryAfterSeconds: number) => `The sign-in provider cannot be reached to check the token's signature. Retry after ${retryAfterSeconds} s.`,
);

/** RFC 6750's error_description allows printable ASCII except `"` and `\`. */
function description(message: string): string {
  return message.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ').slice(0, 300);
}

/** A 401 refusal of a token: the code's message, and the challenge that tells the client to get a new token. */
export function tokenRefusal<Args extends readonly unknown[]>(kind: ErrorKind<Args>, ...args: Args): ServerError {
  const message = kind.message(...args);
  return raise(kind, args, { headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description(message)}"` } });
}

/** The provider's discovery document or keys could not be fetched: 503 with Retry-After, never an anonymous answer. */
export function providerUnavailable(cause: unknown): ServerError {
  return raise(OIDC_UNAVAILABLE, [RETRY_AFTER_SECONDS], { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) }, cause });
}
