import { currentTokens, signInHeaders } from './sign-in-session.js';

/**
 * Download links while the tab is signed in (docs/portal.md, "Signing in"): a followed link cannot
 * carry `Authorization`, and a team-only file answers a caller without it 404. So the page asks
 * `/download` itself with the token, lets fetch follow the redirect to the signed address (which
 * needs no credential), stops reading at the headers, and hands that address to the browser.
 * Signed out, or with a modifier key (a new tab or window), the link is followed as it is.
 */
export function downloadsCarrySignIn(root: Document): void {
  root.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element ? event.target.closest('a[href^="/download/"]') : null;
    if (!(link instanceof HTMLAnchorElement) || currentTokens() === undefined) return;
    event.preventDefault();
    void follow(link);
  });
}

async function follow(link: HTMLAnchorElement): Promise<void> {
  let address = link.href;
  try {
    const res = await fetch(link.href, { headers: await signInHeaders() });
    if (res.ok && res.redirected) address = res.url;
    await res.body?.cancel();
  } catch {
    // The signed address did not answer this page (an object store without a CORS rule for GET
    // from the portal): the link as it is, which serves what anyone may download.
  }
  const go = document.createElement('a');
  go.href = address;
  if (link.hasAttribute('download')) go.download = '';
  go.click();
}
