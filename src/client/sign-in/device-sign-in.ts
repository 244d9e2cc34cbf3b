import * as oauth from 'oauth4webapi';
import { providerMetadata as provider } from './provider-metadata.js';
import type { StoredSignIn } from './sign-in-store.js';

/** Where the service says to sign in (`GET /auth/config`). */
export interface SignInConfig {
  readonly issuer: string;
  readonly clientId: string;
}

function stored(config: SignInConfig, answer: oauth.TokenEndpointResponse, previousRefresh?: string): StoredSignIn {
  const refreshToken = answer.refresh_token ?? previousRefresh;
  return {
    issuer: config.issuer,
    clientId: config.clientId,
    accessToken: answer.access_token,
    ...(refreshToken ? { refreshToken } : {}),
    expiresAt: Math.floor(Date.now() / 1000) + (answer.expires_in ?? 300),
  };
}

/**
 * The device authorization grant (RFC 8628): asks the provider for a code, has `show` tell the
 * user where to enter it, then polls at the provider's pace until they approved (or refused, or
 * the code expired).
 */
export async function deviceSignIn(config: SignInConfig, show: (url: string, code: string, completeUrl?: string) => void): Promise<StoredSignIn> {
  const { as, options } = await provider(config.issuer);
  const client: oauth.Client = { client_id: config.clientId };
  const auth = oauth.None();
  const started = await oauth.processDeviceAuthorizationResponse(
    as,
    client,
    await oauth.deviceAuthorizationRequest(as, client, auth, new URLSearchParams({ scope: 'openid profile offline_access' }), options),
  );
  show(started.verification_uri, started.user_code, started.verification_uri_complete);
  let interval = started.interval ?? 5;
  const deadline = Date.now() + started.expires_in * 1000;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
    try {
      const answer = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, auth, started.device_code, options));
      return stored(config, answer);
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.error === 'authorization_pending') continue;
      if (err instanceof oauth.ResponseBodyError && err.error === 'slow_down') {
        interval += 5;
        continue;
      }
      if (err instanceof oauth.ResponseBodyError) throw new Error(`the provider refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`);
      throw err;
    }
  }
  throw new Error('the code expired before it was approved: run sdc login again');
}

/** A new access token from the refresh token (the provider may hand out a new refresh token too). */
export async function refreshSignIn(signIn: StoredSignIn): Promise<StoredSignIn> {
  if (!signIn.refreshToken) throw new Error('the sign-in has expired and holds no refresh token: run sdc login again');
  const config = { issuer: signIn.issuer, clientId: signIn.clientId };
  const { as, options } = await provider(signIn.issuer);
  const client: oauth.Client = { client_id: signIn.clientId };
  try {
    const answer = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), signIn.refreshToken, options));
    return stored(config, answer, signIn.refreshToken);
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) throw new Error(`the sign-in could not be renewed (${err.error}): run sdc login again`);
    throw err;
  }
}
