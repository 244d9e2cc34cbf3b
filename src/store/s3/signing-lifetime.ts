/**
 * How long an S3 address signed now really lives (docs/deploy.md "Credentials and address
 * lifetimes"): a presigned address dies with the credentials that signed it, whatever its
 * X-Amz-Expires says. So the lifetime asked for is capped to the credentials' expiry where the
 * SDK knows it (STS, ECS and EC2 roles, SSO, AWS_CREDENTIAL_EXPIRATION), and to an hour for
 * session credentials whose expiry nobody states (a Lambda's role credentials, read from its
 * environment). Long-term keys (an IAM user's) are not capped.
 */

/** What the SDK resolves as the signing credentials (the part that matters here). */
export interface SigningCredentials {
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** The cap for session credentials of unknown expiry: the longest a chained role session may be asked for. */
export const UNSTATED_SESSION_SECONDS = 3600;

/** `ttlSeconds`, or less when the credentials die sooner; at least 1 s. */
export function signingLifetime(ttlSeconds: number, credentials: SigningCredentials, now = Date.now()): number {
  if (credentials.expiration !== undefined) {
    return Math.max(1, Math.min(ttlSeconds, Math.floor((credentials.expiration.getTime() - now) / 1000)));
  }
  if (credentials.sessionToken !== undefined) return Math.min(ttlSeconds, UNSTATED_SESSION_SECONDS);
  return ttlSeconds;
}
