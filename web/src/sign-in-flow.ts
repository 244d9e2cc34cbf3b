import * as oauth from 'oauth4webapi';
import { providerMetadata } from '../../src/client/sign-in/provider-metadata.js';
import { PORTAL_CALLBACK_PATH } from '../../src/wire/sign-in.js';

/**
 * The portal's side of the authorization code flow with PKCE (RFC 7636) as a public client
 * (docs/portal.md, "Signing in"), through oauth4webapi: what leaves for the provider, what
 * comes back to `/auth/callback`, renewals and the revocation at sign-out.
 */

/** Where the provider sends the browser back (src/wire/sign-in.ts): the redirect URI registered for the portal. */
export const CALLBACK_PATH = PORTAL_CALLBACK_PATH;
export const redirectUri = (): string => `${location.origin}${CALLBACK_PATH}`;

/** What the archive names as its provider (`GET /auth/config`). */
export interface ProviderChoice {
  readonly issuer: string;
  readonly clientId: string;
}

/** The tokens of one sign-in, as kept for this tab (sign-in-session.ts). */
export interface Tokens extends ProviderChoice {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** When the access token ends, epoch seconds. */
  readonly expiresAt: number;
}

/** What the page remembers across the trip to the provider: the PKCE verifier, state, nonce, where to come back to. */
export interface PendingSignIn extends ProviderChoice {
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string;
  readonly returnTo: string;
}

/** An answer of the provider that ends the attempt, in words for the page. */
export class SignInError extends Error {
  override name = 'SignInError';
}

const SCOPE = 'openid profile';

function tokensOf(choice: ProviderChoice, answer: oauth.TokenEndpointResponse, previousRefresh?: string): Tokens {
  const refreshToken = answer.refresh_token ?? previousRefresh;
  return { ...choice, accessToken: answer.access_token, ...(refreshToken ? { refreshToken } : {}), expiresAt: Math.floor(Date.now() / 1000) + (answer.expires_in ?? 300) };
}

function refusal(err: unknown, what: string): never {
  if (err instanceof oauth.ResponseBodyError || err instanceof oauth.AuthorizationResponseError) {
    throw new SignInError(`The sign-in provider refused ${what}: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}.`);
  }
  throw err;
}

/** The provider's authorization address for a new attempt, and what to remember until it comes back. */
export async function startSignIn(choice: ProviderChoice, returnTo: string): Promise<{ url: string; pending: PendingSignIn }> {
  const { as } = await providerMetadata(choice.issuer);
  if (!as.authorization_endpoint) throw new SignInError(`The sign-in provider ${choice.issuer} publishes no authorization endpoint.`);
  const pending = { ...choice, verifier: oauth.generateRandomCodeVerifier(), state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), returnTo };
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: choice.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: SCOPE,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.href, pending };
}

/** The provider's answer at the callback (`currentUrl`) exchanged for tokens, checked against what was sent. */
export async function finishSignIn(pending: PendingSignIn, currentUrl: URL): Promise<Tokens> {
  const { as, options } = await providerMetadata(pending.issuer);
  const client: oauth.Client = { client_id: pending.clientId };
  try {
    const params = oauth.validateAuthResponse(as, client, currentUrl, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), pending.verifier, options);
    return tokensOf(pending, await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: pending.nonce }));
  } catch (err) {
    return refusal(err, 'the sign-in');
  }
}

/** A new access token from the refresh token (the provider may hand out a new refresh token too). */
export async function renewTokens(tokens: Tokens): Promise<Tokens> {
  if (!tokens.refreshToken) throw new SignInError('The sign-in has ended and cannot be renewed.');
  const { as, options } = await providerMetadata(tokens.issuer);
  const client: oauth.Client = { client_id: tokens.clientId };
  try {
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refreshToken, options);
    return tokensOf(tokens, await oauth.processRefreshTokenResponse(as, client, response), tokens.refreshToken);
  } catch (err) {
    return refusal(err, 'to renew the sign-in');
  }
}

/** Asks the provider to forget the refresh token (RFC 7009), where it offers revocation; best effort. */
export async function revokeTokens(tokens: Tokens): Promise<void> {
  if (!tokens.refreshToken) return;
  const { as, options } = await providerMetadata(tokens.issuer);
  if (!as.revocation_endpoint) return;
  const client: oauth.Client = { client_id: tokens.clientId };
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refreshToken, options));
}
