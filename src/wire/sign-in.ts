/**
 * Where the sign-in provider sends the portal back with its authorization code: the redirect
 * URI registered for the portal's public client (docs/deploy.md, "Sign-in with Keycloak"). The
 * server serves the portal's page there (src/http/portal-plugin.ts); the page completes the
 * sign-in (web/src/sign-in-view.ts).
 */
export const PORTAL_CALLBACK_PATH = '/auth/callback';
