import type { TestProvider } from './oidc-provider.js';
import { CLIENT_ID } from './oidc-provider.js';

/** Cookies by name, as a browser would keep them for the provider's origin. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The first form of a page: its action and its inputs (hidden values kept), or undefined. */
function formOf(html: string): { action: string; fields: Map<string, string> } | undefined {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields = new Map<string, string>();
  for (const input of form[2]!.matchAll(/<(?:input|button)\b([^>]*)>/gi)) {
    const name = /name="([^"]*)"/.exec(input[1]!)?.[1];
    if (name !== undefined) fields.set(name, /value="([^"]*)"/.exec(input[1]!)?.[1] ?? '');
  }
  return { action: form[1]!.replace(/&amp;/g, '&'), fields };
}

/**
 * Completes the provider's pages as a person at a browser would, over plain HTTP: follows
 * redirects, fills each form (the user code confirmed, `user` signed in with any password),
 * until a page with no form (the device flow's success page) or a redirect off the provider
 * (the authorization code's redirect, returned).
 */
export async function completeProviderPages(provider: TestProvider, startUrl: string, user: string): Promise<string | undefined> {
  const jar = new CookieJar();
  let url = startUrl;
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as object), cookie: jar.header() } });
    jar.take(response);
    const location = response.headers.get('location');
    if (location) {
      url = new URL(location, url).href;
      init = {};
      if (!url.startsWith(provider.issuer)) return url;
      continue;
    }
    const html = await response.text();
    if (response.status >= 400) throw new Error(`provider page ${url}: ${response.status} ${html.slice(0, 500)}`);
    const form = formOf(html);
    if (!form) return undefined;
    if (form.fields.has('login')) form.fields.set('login', user);
    if (form.fields.has('password')) form.fields.set('password', 'any');
    if (form.fields.has('confirm')) form.fields.set('confirm', 'yes');
    form.fields.delete('abort');
    url = new URL(form.action, url).href;
    init = { method: 'POST', body: new URLSearchParams([...form.fields]).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider pages did not end within 20 steps');
}

export interface Tokens {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly expires_in: number;
}

/** Signs `user` in with the device grant, approving it on the provider's pages: real tokens of the provider. */
export async function deviceSignIn(provider: TestProvider, user: string): Promise<Tokens> {
  const post = async (path: string, form: Record<string, string>) => {
    const response = await fetch(`${provider.issuer}${path}`, { method: 'POST', body: new URLSearchParams(form) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const started = await post('/device/auth', { client_id: CLIENT_ID, scope: 'openid offline_access profile' });
  if (started.status !== 200) throw new Error(`device authorization: ${JSON.stringify(started.body)}`);
  await completeProviderPages(provider, started.body.verification_uri_complete as string, user);
  const token = await post('/token', { client_id: CLIENT_ID, grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code as string });
  if (token.status !== 200) throw new Error(`device token: ${JSON.stringify(token.body)}`);
  return token.body as unknown as Tokens;
}
