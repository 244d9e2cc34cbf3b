/**
 * Sign-in with the institution's OpenID Connect provider (docs/trust.md, "Signed-in callers"):
 * the settings, validated once. Bearer tokens are verified only when an issuer is set.
 */
export interface OidcSettings {
  /** The issuer URL exactly as the provider writes it in `iss` (discovery at /.well-known/openid-configuration). */
  readonly issuer: string;
  /** The `aud` a token must carry to be for this archive. */
  readonly audience: string;
  /** Dotted path of the claim holding the caller's groups or roles (`groups`; `realm_access.roles` for Keycloak). */
  readonly rolesClaim: readonly string[];
  /** Each role and the claim values that grant it; the strongest granted role wins. */
  readonly roles: Readonly<Record<OidcRole, readonly string[]>>;
  /** The claim naming the caller (`preferred_username`), `sub` when it is absent. */
  readonly nameClaim: string;
  /** The public client the portal signs in with (authorization code + PKCE); the CLI's device grant uses it too. */
  readonly clientId: string | undefined;
}

/** The roles a token can be granted, strongest first (docs/trust.md, "Signed-in callers"). */
export const OIDC_ROLES = ['curator', 'uploader', 'reader'] as const;
export type OidcRole = (typeof OIDC_ROLES)[number];

export type OidcVariables = {
  readonly issuer?: string;
  readonly audience?: string;
  readonly rolesClaim?: string;
  readonly roles?: string;
  readonly nameClaim?: string;
  readonly clientId?: string;
};

/** A loopback provider may speak plain HTTP (a laptop, the tests); any other must be HTTPS. */
function isAllowedIssuer(issuer: string): boolean {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return false;
  }
  if (url.search !== '' || url.hash !== '') return false;
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  return url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
}

/** Parses SDC_OIDC_*; undefined when no issuer is set. `fail` says which variable is wrong and how. */
export function parseOidcSettings(raw: OidcVariables, fail: (message: string) => Error): OidcSettings | undefined {
  const { issuer, audience } = raw;
  if (issuer === undefined) {
    const stray = Object.entries(raw).find(([, value]) => value !== undefined);
    if (stray) throw fail(`SDC_OIDC_${stray[0].replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()} is set without SDC_OIDC_ISSUER: set the provider's issuer URL too, or unset it`);
    return undefined;
  }
  if (!isAllowedIssuer(issuer)) {
    throw fail(`SDC_OIDC_ISSUER must be the provider's https:// issuer URL (http only on localhost), without query or fragment, got ${JSON.stringify(issuer)}`);
  }
  if (audience === undefined) throw fail('SDC_OIDC_AUDIENCE is required with SDC_OIDC_ISSUER: the aud value tokens for this archive carry (e.g. sdc-api)');
  const rolesClaim = (raw.rolesClaim ?? 'groups').split('.');
  if (rolesClaim.some((part) => part === '')) throw fail(`SDC_OIDC_ROLES_CLAIM must be a claim name or a dotted path such as realm_access.roles, got ${JSON.stringify(raw.rolesClaim)}`);
  return Object.freeze({
    issuer,
    audience,
    rolesClaim: Object.freeze(rolesClaim),
    roles: parseRoles(raw.roles, fail),
    nameClaim: raw.nameClaim ?? 'preferred_username',
    clientId: raw.clientId,
  });
}

function parseRoles(raw: string | undefined, fail: (message: string) => Error): Readonly<Record<OidcRole, readonly string[]>> {
  const example = '{"curator": ["sdc-curators"], "uploader": ["instrument-teams"], "reader": ["mission-team"]}';
  let parsed: unknown = {};
  if (raw !== undefined) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw fail(`SDC_OIDC_ROLES must be JSON such as ${example}, got ${JSON.stringify(raw)}`);
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail(`SDC_OIDC_ROLES must be a JSON object such as ${example}`);
  const entries = Object.entries(parsed);
  for (const [role, values] of entries) {
    if (!(OIDC_ROLES as readonly string[]).includes(role)) throw fail(`SDC_OIDC_ROLES: unknown role ${JSON.stringify(role)}; the roles are ${OIDC_ROLES.join(', ')}`);
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v === '')) {
      throw fail(`SDC_OIDC_ROLES: the role ${role} must map to a list of claim values (strings), e.g. ${example}`);
    }
  }
  const roles = Object.fromEntries(OIDC_ROLES.map((role) => [role, Object.freeze([...((parsed as Record<string, string[]>)[role] ?? [])])]));
  return Object.freeze(roles) as Record<OidcRole, readonly string[]>;
}
