import { renewTokens, SignInError, type PendingSignIn, type Tokens } from './sign-in-flow.js';

/**
 * The tab's sign-in (docs/portal.md, "Signing in"): its tokens in sessionStorage, so a reload
 * and the trip to the provider keep them while other tabs and a closed tab do not; the access
 * token renewed with the refresh token shortly before it ends, when a request needs it; every
 * request of the page sends it as `Authorization: Bearer`.
 */

const TOKENS_KEY = 'sdc.sign-in';
const PENDING_KEY = 'sdc.sign-in.pending';

/** Renewed when less than this is left (seconds), as `sdc login` does: no request leaves with a token about to end. */
const RENEW_BEFORE_SECONDS = 60;

function read<T>(key: string): T | undefined {
  try {
    const text = sessionStorage.getItem(key);
    return text === null ? undefined : (JSON.parse(text) as T);
  } catch {
    return undefined;
  }
}

const listeners = new Set<(why?: string) => void>();
let renewing: Promise<Tokens | undefined> | undefined;

/** Calls `listener` when the tab signs in or out (with the reason, when it was not the user's doing). */
export function onSignInChange(listener: (why?: string) => void): void {
  listeners.add(listener);
}

export const currentTokens = (): Tokens | undefined => read<Tokens>(TOKENS_KEY);

/** Keeps the tab's tokens (undefined: signs out); listeners hear of a sign-in or a sign-out, not of a renewal. */
export function keepTokens(tokens: Tokens | undefined, why?: string): void {
  const was = currentTokens() !== undefined;
  if (tokens) sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(TOKENS_KEY);
  if (was !== (tokens !== undefined)) for (const listener of listeners) listener(why);
}

export function keepPending(pending: PendingSignIn): void {
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
}

/** The attempt under way, taken out of storage: a callback page is used once. */
export function takePending(): PendingSignIn | undefined {
  const pending = read<PendingSignIn>(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  return pending;
}

/** The access token to send now, renewed first when it is about to end; undefined when signed out (or the provider refused the renewal: signed out, saying why). */
async function accessToken(): Promise<string | undefined> {
  const tokens = currentTokens();
  if (!tokens) return undefined;
  if (tokens.expiresAt - RENEW_BEFORE_SECONDS > Date.now() / 1000) return tokens.accessToken;
  renewing ??= renewTokens(tokens)
    .then((renewed) => {
      keepTokens(renewed);
      return renewed;
    })
    .catch((err: unknown) => {
      // A provider that cannot be reached now leaves the sign-in as it is: the token is sent as it
      // is, and an ended one gets the service's 401 saying so, never a quiet anonymous answer.
      if (!(err instanceof SignInError)) return tokens;
      keepTokens(undefined, `${err.message} Sign in again.`);
      return undefined;
    })
    .finally(() => (renewing = undefined));
  return (await renewing)?.accessToken;
}

/** The header that carries the tab's sign-in, or none. */
export async function signInHeaders(): Promise<Record<string, string>> {
  const token = await accessToken();
  return token === undefined ? {} : { Authorization: `Bearer ${token}` };
}
