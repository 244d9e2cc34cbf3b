import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

/** The audience the archive's tokens carry in these tests (SDC_OIDC_AUDIENCE). */
export const AUDIENCE = 'sdc-api';
/** The public client of the portal and of `sdc login`. */
export const CLIENT_ID = 'sdc-portal';
/** The resource indicator the provider issues the archive's tokens for (their audience is AUDIENCE). */
const RESOURCE = 'urn:sdc:api';

/** Who may sign in, and the groups the provider puts in their tokens (the `groups` claim). */
export const ACCOUNTS: Readonly<Record<string, readonly string[]>> = {
  carol: ['sdc-curators', 'mission-team'],
  ursula: ['instrument-teams'],
  rita: ['mission-team'],
  nobody: ['other-project'],
};

/** SDC_OIDC_ROLES for those groups. */
export const ROLES_JSON = JSON.stringify({ curator: ['sdc-curators'], uploader: ['instrument-teams'], reader: ['mission-team'] });

export interface SigningKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly privateKey: import('node:crypto').webcrypto.CryptoKey;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface TestProvider {
  /** The issuer URL (SDC_OIDC_ISSUER), http://127.0.0.1:<port>. */
  readonly issuer: string;
  /** The key it signs with now (first of its JWKS). */
  readonly key: SigningKey;
  /** The variables that point a server at it. */
  readonly env: Readonly<Record<string, string>>;
  /** A token signed with the provider's current key (or `key`), for the checks a real provider never fails. */
  sign(claims: JWTPayload, options?: { key?: SigningKey; alg?: string; kid?: string }): Promise<string>;
  /** Restarts the provider on the same port publishing `keys` (the first signs): a key rotation. */
  rotate(keys: readonly SigningKey[]): Promise<void>;
  /** Stops answering (connections refused) until `start` again. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

function providerFor(issuer: string, keys: readonly SigningKey[], redirectUris: readonly string[]): Provider {
  const claimsOf = (sub: string) => ({ sub, preferred_username: sub, groups: [...(ACCOUNTS[sub] ?? [])] });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        application_type: 'web',
        redirect_uris: [...redirectUris],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: keys.map((k) => k.privateJwk) },
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'openid offline_access', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    scopes: ['openid', 'offline_access', 'profile'],
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => claimsOf(sub) }),
    // What the archive reads: the caller's name and groups, in the access token itself.
    extraTokenClaims: (_ctx, token) => {
      const sub = (token as { accountId?: string }).accountId;
      return sub === undefined ? undefined : { preferred_username: sub, groups: [...(ACCOUNTS[sub] ?? [])] };
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Consent is not what is tested: every sign-in is granted what it asks.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid offline_access profile');
      grant.addResourceScope(RESOURCE, 'openid offline_access');
      await grant.save();
      return grant;
    },
    ttl: { AccessToken: 300, DeviceCode: 300, RefreshToken: 3600, Session: 3600, Interaction: 600, Grant: 3600 },
  });
  return provider;
}

/** A real OpenID provider (oidc-provider, OpenID Certified) on a loopback port, signing with a key the test also holds. */
export async function startTestProvider(redirectUris: readonly string[] = ['http://127.0.0.1/']): Promise<TestProvider> {
  let keys: readonly SigningKey[] = [await signingKey('key-1')];
  let server: Server | undefined;
  let port = 0;
  let issuer = '';
  const listen = async () => {
    const next = createServer();
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    port = (next.address() as AddressInfo).port;
    issuer = `http://127.0.0.1:${port}`;
    next.on('request', providerFor(issuer, keys, redirectUris).callback());
    server = next;
  };
  const close = async () => {
    const current = server;
    server = undefined;
    if (!current) return;
    current.closeAllConnections();
    await new Promise<void>((resolve) => current.close(() => resolve()));
  };
  await listen();
  const self: TestProvider = {
    get issuer() {
      return issuer;
    },
    get key() {
      return keys[0]!;
    },
    get env() {
      return { SDC_OIDC_ISSUER: issuer, SDC_OIDC_AUDIENCE: AUDIENCE, SDC_OIDC_ROLES: ROLES_JSON, SDC_OIDC_CLIENT_ID: CLIENT_ID };
    },
    async sign(claims, options = {}) {
      const key = options.key ?? keys[0]!;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: AUDIENCE, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? key.kid, typ: 'at+jwt' })
        .sign(key.privateKey);
    },
    async rotate(next) {
      await close();
      keys = next;
      await listen();
    },
    stop: close,
    start: listen,
  };
  return self;
}
