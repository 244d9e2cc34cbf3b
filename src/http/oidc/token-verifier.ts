import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { KeyRole } from '../../catalog/index.js';
import {
  ServerError,
  TOKEN_ALG_NOT_ALLOWED,
  TOKEN_BAD_SIGNATURE,
  TOKEN_EXPIRED,
  TOKEN_MALFORMED,
  TOKEN_NOT_YET_VALID,
  TOKEN_TOO_LARGE,
  TOKEN_UNKNOWN_KEY,
  TOKEN_WRONG_AUDIENCE,
  TOKEN_WRONG_ISSUER,
  tokenRefusal,
} from '../../errors/index.js';
import type { OidcSettings } from '../../oidc-config.js';
import { callerName, grantedRole } from './token-claims.js';

/** Asymmetric algorithms only: a symmetric one (HS256) would let whoever knows the public key sign. */
export const ALLOWED_ALGORITHMS = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

/** Clock difference tolerated on `exp` and `nbf` (seconds). */
export const CLOCK_SKEW_SECONDS = 30;

/** Longest token looked at: far above a provider's access token, far below the header limit. */
export const MAX_TOKEN_LENGTH = 8192;

/** A verified token: who signed in (as recorded: `oidc:<name>`), the role granted, when the token ends (epoch seconds). */
export interface SignedIn {
  readonly kind: 'token';
  readonly name: string;
  readonly role: KeyRole | undefined;
  readonly expiresAt: number | undefined;
}

/** The prefix of a signed-in caller's recorded name: a key's name never holds `:`, so the two never collide. */
export const SIGNED_IN_PREFIX = 'oidc:';

/**
 * True when a Bearer value is meant as a JWT: it begins as a base64url JSON header (`eyJ`,
 * `{"`). API keys begin `sdc_`; any other value is still tried as an API key.
 */
export function looksLikeJwt(value: string): boolean {
  return value.startsWith('eyJ');
}

export type TokenVerdict = SignedIn | { readonly kind: 'refused'; readonly error: ServerError };

/** jose's verdicts, each as its refusal (docs/api.md, Error codes). */
function refusalOf(err: unknown, settings: OidcSettings, alg: string): ServerError {
  if (err instanceof ServerError) return err;
  if (err instanceof errors.JWTExpired) return tokenRefusal(TOKEN_EXPIRED);
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return tokenRefusal(TOKEN_WRONG_ISSUER, settings.issuer);
    if (err.claim === 'aud') return tokenRefusal(TOKEN_WRONG_AUDIENCE, settings.audience);
    if (err.claim === 'nbf') return tokenRefusal(TOKEN_NOT_YET_VALID);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return tokenRefusal(TOKEN_ALG_NOT_ALLOWED, alg, ALLOWED_ALGORITHMS);
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return tokenRefusal(TOKEN_UNKNOWN_KEY);
  if (err instanceof errors.JWSSignatureVerificationFailed) return tokenRefusal(TOKEN_BAD_SIGNATURE);
  return tokenRefusal(TOKEN_MALFORMED);
}

/** The `alg` a token's header names, for the refusal's text (undefined when the header does not decode). */
function headerAlg(token: string): string {
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { alg?: unknown };
    return typeof header.alg === 'string' ? header.alg.slice(0, 20) : 'no algorithm';
  } catch {
    return 'no algorithm';
  }
}

/**
 * Verifies Bearer tokens of the configured provider (docs/trust.md, "Signed-in callers"):
 * signature against the provider's keys (`keys`, provider-keys.ts), an allow-list of
 * asymmetric algorithms, issuer, audience, `exp` and `nbf` with a small skew; then the
 * caller's name and role from the claims (token-claims.ts). A provider that cannot be
 * reached throws its 503; every refusal of the token itself is a verdict.
 */
export class TokenVerifier {
  constructor(
    private readonly settings: OidcSettings,
    private readonly keys: JWTVerifyGetKey,
  ) {}

  async verify(token: string): Promise<TokenVerdict> {
    if (token.length > MAX_TOKEN_LENGTH) return { kind: 'refused', error: tokenRefusal(TOKEN_TOO_LARGE, MAX_TOKEN_LENGTH) };
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token, this.keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: CLOCK_SKEW_SECONDS,
      }));
    } catch (err) {
      if (err instanceof ServerError && err.statusCode === 503) throw err;
      return { kind: 'refused', error: refusalOf(err, this.settings, headerAlg(token)) };
    }
    const name = callerName(claims, this.settings.nameClaim);
    if (name instanceof ServerError) return { kind: 'refused', error: name };
    const role = grantedRole(claims, this.settings);
    if (role instanceof ServerError) return { kind: 'refused', error: role };
    return { kind: 'token', name: `${SIGNED_IN_PREFIX}${name}`, role, expiresAt: claims.exp };
  }
}
