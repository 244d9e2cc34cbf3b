import { createHmac, createPublicKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKey, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/**
 * Hostile Bearer tokens against a server that trusts a real provider (oidc-provider on
 * loopback): each is refused 401 with its own code and the invalid_token challenge, on an
 * upload route and on an open read alike (docs/trust.md, "Signed-in callers").
 */
describe('Bearer tokens an attacker makes', () => {
  let provider: TestProvider;
  let foreign: TestProvider;
  let server: TestServer;
  const uploader = { sub: 'ursula', preferred_username: 'ursula', groups: ['instrument-teams'] };

  beforeAll(async () => {
    provider = await startTestProvider();
    foreign = await startTestProvider();
    server = await startTestServer({}, provider.env);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.stop();
    await foreign?.stop();
  });

  const send = (token: string, path = `/upload/${SAMPLE_PATH}`) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });

  async function expectRefused(token: string, code: string): Promise<void> {
    for (const path of [`/upload/${SAMPLE_PATH}`, '/query']) {
      const res = await send(token, path);
      expect([res.status, res.headers.get('x-error-code')], `${code} on ${path}`).toEqual([401, code]);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="[^"\\]+"$/);
      expect(await res.text()).not.toMatch(/at .*\.ts:\d+/);
    }
  }

  it('a well-made token of the provider passes (the cases below differ from it in one thing each)', async () => {
    expect((await send(await provider.sign(uploader))).status).toBe(200);
  });

  it('alg none, unsigned', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...uploader, iss: provider.issuer, aud: 'sdc-api', exp: now() + 300 })}.`;
    await expectRefused(token, 'SDC_TOKEN_ALG_NOT_ALLOWED');
  });

  it('HS256 signed with the provider\'s public key as the HMAC secret', async () => {
    const publicPem = createPublicKey({ key: provider.key.privateJwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
    const signingInput = `${b64({ alg: 'HS256', typ: 'JWT', kid: provider.key.kid })}.${b64({ ...uploader, iss: provider.issuer, aud: 'sdc-api', exp: now() + 300 })}`;
    for (const secret of [publicPem, JSON.stringify({ kty: provider.key.privateJwk.kty, n: provider.key.privateJwk.n, e: provider.key.privateJwk.e })]) {
      const token = `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
      await expectRefused(token, 'SDC_TOKEN_ALG_NOT_ALLOWED');
    }
  });

  it('another issuer, signed with the provider\'s own key', async () => {
    await expectRefused(await provider.sign({ ...uploader, iss: foreign.issuer }), 'SDC_TOKEN_WRONG_ISSUER');
  });

  it('a token of another real provider whose key has the same kid: the signature does not verify', async () => {
    await expectRefused(await foreign.sign({ ...uploader, iss: provider.issuer }), 'SDC_TOKEN_BAD_SIGNATURE');
  });

  it('another audience', async () => {
    await expectRefused(await provider.sign({ ...uploader, aud: 'another-service' }), 'SDC_TOKEN_WRONG_AUDIENCE');
  });

  it('expired (beyond the 30 s skew), while one expired within it passes', async () => {
    await expectRefused(await provider.sign({ ...uploader, iat: now() - 600, exp: now() - 60 }), 'SDC_TOKEN_EXPIRED');
    expect((await send(await provider.sign({ ...uploader, exp: now() - 10 }))).status).toBe(200);
  });

  it('not yet valid (beyond the skew), while one within it passes', async () => {
    await expectRefused(await provider.sign({ ...uploader, nbf: now() + 120 }), 'SDC_TOKEN_NOT_YET_VALID');
    expect((await send(await provider.sign({ ...uploader, nbf: now() + 10 }))).status).toBe(200);
  });

  it('a kid the provider does not publish', async () => {
    await expectRefused(await provider.sign(uploader, { key: await signingKey('intruder') }), 'SDC_TOKEN_UNKNOWN_KEY');
  });

  it('truncated: in its signature, and before it', async () => {
    const token = await provider.sign(uploader);
    await expectRefused(token.slice(0, -12), 'SDC_TOKEN_BAD_SIGNATURE');
    await expectRefused(token.slice(0, token.indexOf('.') + 20), 'SDC_TOKEN_MALFORMED');
  });

  it('oversized, though validly signed', async () => {
    const token = await provider.sign({ ...uploader, padding: 'x'.repeat(9000) });
    await expectRefused(token, 'SDC_TOKEN_TOO_LARGE');
  });

  it('a roles claim of the wrong type', async () => {
    await expectRefused(await provider.sign({ ...uploader, groups: 'sdc-curators' }), 'SDC_TOKEN_ROLES_CLAIM_INVALID');
    await expectRefused(await provider.sign({ ...uploader, groups: [1, 2] }), 'SDC_TOKEN_ROLES_CLAIM_INVALID');
    await expectRefused(await provider.sign({ ...uploader, groups: { curator: true } }), 'SDC_TOKEN_ROLES_CLAIM_INVALID');
  });

  it('a name that cannot be recorded (nor a sub to fall back on)', async () => {
    await expectRefused(await provider.sign({ preferred_username: 'ursula\nuploader=carol', groups: ['instrument-teams'] }), 'SDC_TOKEN_NAME_INVALID');
  });
});
