import type { FastifyInstance } from 'fastify';
import type { OidcSettings } from '../../oidc-config.js';

const json = (description: string, properties: Record<string, object>) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', properties } } },
});
const nullable = (type: string, description: string) => ({ type: [type, 'null'], description });

/**
 * What a client needs to sign in, and who it is signed in as (docs/trust.md, "Signed-in
 * callers"): `GET /auth/config` (public: the provider's issuer, the public client id and the
 * audience, or nulls when the archive takes API keys only) and `GET /auth/whoami` (class `read`:
 * the caller's name, role and, for a token, when it ends).
 */
export function signInRoutes(oidc: OidcSettings | undefined) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get(
      '/auth/config',
      {
        config: { access: 'public' },
        schema: {
          operationId: 'authConfig',
          tags: ['sign-in'],
          summary: "The OpenID Connect provider the portal and sdc login sign in with (nulls: API keys only)",
          response: {
            200: json('Where to sign in.', {
              issuer: nullable('string', 'The issuer URL (discovery at /.well-known/openid-configuration).'),
              client_id: nullable('string', 'The public client (authorization code + PKCE, device grant).'),
              audience: nullable('string', 'The aud of tokens for this archive.'),
            }),
          },
        },
      },
      async () => ({ issuer: oidc?.issuer ?? null, client_id: oidc?.clientId ?? null, audience: oidc?.audience ?? null }),
    );

    app.get(
      '/auth/whoami',
      {
        config: { access: 'read' },
        schema: {
          operationId: 'whoami',
          tags: ['sign-in'],
          summary: 'Who the request is signed in as: the API key or token it carries, its role and expiry',
          response: {
            200: json('The caller (all null without a credential).', {
              name: nullable('string', 'The key name, or oidc:<name> for a signed-in caller.'),
              role: nullable('string', 'curator, uploader or reader; null for none.'),
              via: nullable('string', '"api-key" or "token".'),
              expires_at: nullable('string', 'When the token ends (ISO 8601); null for a key.'),
            }),
          },
        },
      },
      async (request) => {
        const verdict = request.keyVerdict;
        if (verdict?.kind === 'token') {
          const expires = verdict.expiresAt === undefined ? null : new Date(verdict.expiresAt * 1000).toISOString();
          return { name: verdict.name, role: verdict.role ?? null, via: 'token', expires_at: expires };
        }
        if (verdict?.kind === 'valid') return { name: verdict.name, role: verdict.role, via: 'api-key', expires_at: null };
        return { name: null, role: null, via: null, expires_at: null };
      },
    );
  };
}
