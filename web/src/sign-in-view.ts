import { serviceFetch } from './service-errors.js';
import { CALLBACK_PATH, finishSignIn, revokeTokens, SignInError, startSignIn, type ProviderChoice } from './sign-in-flow.js';
import { currentTokens, keepPending, keepTokens, onSignInChange, signInHeaders, takePending } from './sign-in-session.js';

export interface SignInElements {
  readonly region: HTMLElement;
  readonly status: HTMLElement;
  readonly signIn: HTMLButtonElement;
  readonly signOut: HTMLButtonElement;
}

/** Who `GET /auth/whoami` says the tab is: `oidc:<name>` and a role, or nulls. */
interface WhoAmI {
  readonly name: string | null;
  readonly role: string | null;
}

const plainName = (name: string) => name.replace(/^oidc:/, '');

/**
 * The header's Sign in / Sign out (docs/portal.md, "Signing in"), shown only when the archive
 * names a provider (`GET /auth/config`); while signed in it says who the archive takes the tab
 * for, and with which role, as `GET /auth/whoami` answers.
 */
export class SignInView {
  private choice: ProviderChoice | undefined;

  constructor(private readonly el: SignInElements) {
    el.signIn.addEventListener('click', () => void this.signIn());
    el.signOut.addEventListener('click', () => void this.signOut());
    onSignInChange((why) => void this.show(why));
  }

  /**
   * On `/auth/callback`, completes the sign-in the provider sent the browser back from, then
   * puts back the address the user left (its search); elsewhere nothing. Resolves once the
   * page may run its search.
   */
  async completeCallback(): Promise<void> {
    if (location.pathname !== CALLBACK_PATH) return;
    const pending = takePending();
    const callback = new URL(location.href);
    history.replaceState(null, '', pending?.returnTo ?? '/');
    if (!pending) return this.say('This sign-in answer was already used or belongs to another tab; press Sign in again.');
    try {
      keepTokens(await finishSignIn(pending, callback));
    } catch (err) {
      this.say(err instanceof SignInError ? `${err.message} Press Sign in to try again.` : 'The sign-in provider cannot be reached right now; try again later.');
    }
  }

  /** Reads where to sign in, then shows the controls for the tab's state. */
  async start(): Promise<void> {
    try {
      const res = await serviceFetch('/auth/config', { headers: { Accept: 'application/json' } });
      const config = res.ok ? ((await res.json()) as { issuer: string | null; client_id: string | null }) : undefined;
      if (config?.issuer && config.client_id) this.choice = { issuer: config.issuer, clientId: config.client_id };
    } catch {
      // No answer: the search says the archive cannot be reached; the controls stay hidden.
    }
    await this.show();
  }

  private say(text: string): void {
    this.el.status.textContent = text;
  }

  private async show(why?: string): Promise<void> {
    const signedIn = currentTokens() !== undefined;
    this.el.region.hidden = this.choice === undefined && !signedIn;
    this.el.signIn.hidden = signedIn || this.choice === undefined;
    this.el.signOut.hidden = !signedIn;
    // Signed out: a reason replaces what is said; none (the page starting) keeps what the callback said.
    if (!signedIn) return why === undefined ? undefined : this.say(why);
    this.say('Signed in.');
    try {
      const res = await serviceFetch('/auth/whoami', { headers: { Accept: 'application/json', ...(await signInHeaders()) } });
      if (res.status === 401) return keepTokens(undefined, 'The sign-in has ended. Sign in again.');
      if (!res.ok) return;
      const who = (await res.json()) as WhoAmI;
      if (who.name !== null && currentTokens() !== undefined) this.say(`Signed in as ${plainName(who.name)} (${who.role ?? 'no role in this archive'})`);
    } catch {
      // Who the tab is stays unsaid until the archive answers again.
    }
  }

  private async signIn(): Promise<void> {
    if (!this.choice) return;
    this.el.signIn.disabled = true;
    try {
      const { url, pending } = await startSignIn(this.choice, `${location.pathname}${location.search}${location.hash}`);
      keepPending(pending);
      location.assign(url);
    } catch (err) {
      this.el.signIn.disabled = false;
      this.say(err instanceof SignInError ? err.message : 'The sign-in provider cannot be reached right now; try again later.');
    }
  }

  private async signOut(): Promise<void> {
    const tokens = currentTokens();
    keepTokens(undefined, 'Signed out.');
    // Best effort: the tokens are gone from the tab whatever the provider answers.
    if (tokens) await revokeTokens(tokens).catch(() => undefined);
  }
}
