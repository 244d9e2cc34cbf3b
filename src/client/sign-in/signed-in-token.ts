import { refreshSignIn } from './device-sign-in.js';
import { loadSignIn, saveSignIn } from './sign-in-store.js';

/** A token is renewed when less than this is left of it (seconds): no request leaves with one about to end. */
const RENEW_BEFORE_SECONDS = 60;

/**
 * The access token `sdc login` kept for a service, renewed with its refresh token before it
 * ends (and kept again); undefined when the user never signed in to that service. The caller
 * asks before each request, so a long `sdc watch` or upload keeps a fresh token.
 */
export function signedInToken(file: string, serviceUrl: string): () => Promise<string | undefined> {
  let renewing: Promise<string | undefined> | undefined;
  return async () => {
    const signIn = await loadSignIn(file, serviceUrl);
    if (!signIn) return undefined;
    if (signIn.expiresAt - RENEW_BEFORE_SECONDS > Date.now() / 1000) return signIn.accessToken;
    renewing ??= refreshSignIn(signIn)
      .then(async (renewed) => {
        await saveSignIn(file, serviceUrl, renewed);
        return renewed.accessToken;
      })
      .finally(() => (renewing = undefined));
    return renewing;
  };
}
