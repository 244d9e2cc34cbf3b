import type { JWTPayload } from 'jose';
import type { KeyRole } from '../../catalog/index.js';
import { ServerError, TOKEN_NAME_INVALID, TOKEN_ROLES_CLAIM_INVALID, tokenRefusal } from '../../errors/index.js';
import { OIDC_ROLES, type OidcSettings } from '../../oidc-config.js';

/** A name kept in records, logs, signed addresses and S3 metadata: plain ASCII, as key names are. */
const NAME = /^[A-Za-z0-9._@+-]{1,128}$/;

/** The claim at a dotted path (`realm_access.roles`), or undefined where the path ends early. */
export function claimAt(claims: JWTPayload, path: readonly string[]): unknown {
  let value: unknown = claims;
  for (const part of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The caller's name: the name claim, else `sub`; a refusal when neither is a plain name. */
export function callerName(claims: JWTPayload, nameClaim: string): string | ServerError {
  const named = claims[nameClaim];
  const name = typeof named === 'string' && named !== '' ? named : claims.sub;
  return typeof name === 'string' && NAME.test(name) ? name : tokenRefusal(TOKEN_NAME_INVALID, nameClaim);
}

/**
 * The strongest role the roles claim grants (SDC_OIDC_ROLES maps each role to the values that
 * grant it); undefined for none. An absent claim grants nothing; a claim that is not a list of
 * strings is refused: a provider misconfigured that way must be seen, not read as "no role".
 */
export function grantedRole(claims: JWTPayload, settings: Pick<OidcSettings, 'rolesClaim' | 'roles'>): KeyRole | undefined | ServerError {
  const values = claimAt(claims, settings.rolesClaim);
  if (values === undefined) return undefined;
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) return tokenRefusal(TOKEN_ROLES_CLAIM_INVALID, settings.rolesClaim.join('.'));
  const held = new Set(values as string[]);
  return OIDC_ROLES.find((role) => settings.roles[role].some((value) => held.has(value)));
}
