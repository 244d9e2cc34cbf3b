import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signingKey, startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { deviceSignIn } from '../helpers/oidc-sign-in.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

const OTHER_PATH = 'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function put(server: TestServer, path: string, headers: Record<string, string>): Promise<Response> {
  const res = await fetch(`${server.url}/upload/${path}`, { headers });
  if (res.status !== 200) return res;
  return fetch((await res.json()) as string, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } });
}

const codeOf = async (res: Response) => [res.status, res.headers.get('x-error-code')];

describe('Bearer tokens of a real OpenID provider', () => {
  let provider: TestProvider;
  let server: TestServer;
  beforeAll(async () => {
    provider = await startTestProvider();
    server = await startTestServer({}, provider.env);
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.stop();
  });

  it('take the name and role from the token: an uploader uploads as oidc:<name>, a curator withdraws as one', async () => {
    const ursula = await deviceSignIn(provider, 'ursula');
    expect((await put(server, SAMPLE_PATH, bearer(ursula.access_token))).status).toBe(200);
    const [record] = (await (await fetch(`${server.url}/query?instrument=swe`)).json()) as Record<string, unknown>[];
    expect(record!.uploader).toBe('oidc:ursula');

    const withdraw = (token: string) =>
      fetch(`${server.url}/withdraw/${SAMPLE_PATH}`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json' }, body: '{"reason":"bad calibration"}' });
    const refused = await withdraw(ursula.access_token);
    expect(await codeOf(refused)).toEqual([403, 'SDC_TOKEN_ROLE_REFUSED']);
    expect(await refused.text()).toMatch(/signed in as oidc:ursula with the role uploader: this call needs the curator role/);

    const carol = await deviceSignIn(provider, 'carol');
    const whoami = (await (await fetch(`${server.url}/auth/whoami`, { headers: bearer(carol.access_token) })).json()) as Record<string, string>;
    expect(whoami).toMatchObject({ name: 'oidc:carol', role: 'curator', via: 'token' });
    expect(Date.parse(whoami.expires_at!)).toBeGreaterThan(Date.now());
    expect(await (await fetch(`${server.url}/auth/config`)).json()).toEqual({ issuer: provider.issuer, client_id: 'sdc-portal', audience: 'sdc-api' });
    const withdrawn = await withdraw(carol.access_token);
    expect(withdrawn.status).toBe(200);
    expect(await withdrawn.json()).toMatchObject({ uploader: 'oidc:ursula', status: 'withdrawn', withdrawn_by: 'oidc:carol' });
  });

  it('treat a token with no mapped role as signed in: anonymous reads, 403 (not 401) on uploads; a reader uploads nothing either', async () => {
    for (const user of ['nobody', 'rita']) {
      const { access_token } = await deviceSignIn(provider, user);
      expect((await fetch(`${server.url}/query`, { headers: bearer(access_token) })).status).toBe(200);
      const upload = await fetch(`${server.url}/upload/${OTHER_PATH}`, { headers: bearer(access_token) });
      expect(await codeOf(upload)).toEqual([403, 'SDC_TOKEN_ROLE_REFUSED']);
      expect(await upload.text()).toMatch(user === 'nobody' ? /with no role in this archive/ : /with the role reader/);
    }
  });

  it('close uploads to callers without a credential once a provider is set, and still take API keys, as Bearer too', async () => {
    const none = await fetch(`${server.url}/upload/${OTHER_PATH}`);
    expect(await codeOf(none)).toEqual([401, 'SDC_API_KEY_MISSING']);
    const { key } = await server.ctx.catalog.keys().create('swe-pipeline');
    expect((await fetch(`${server.url}/upload/${OTHER_PATH}`, { headers: bearer(key) })).status).toBe(200);
    expect(await codeOf(await fetch(`${server.url}/upload/${OTHER_PATH}`, { headers: bearer('not-a-jwt') }))).toEqual([403, 'SDC_API_KEY_INVALID']);
  });
});

describe('The provider\'s keys', () => {
  let provider: TestProvider;
  let server: TestServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await server?.stop();
    server = undefined;
    await provider?.stop();
  });

  it('are fetched again for a new kid after a rotation, once the cool-down has passed', async () => {
    provider = await startTestProvider();
    server = await startTestServer({}, provider.env);
    const oldKey = provider.key;
    const newKey = await signingKey('key-2');
    const claims = { sub: 'ursula', groups: ['instrument-teams'] };
    const check = async (token: string) => codeOf(await fetch(`${server!.url}/upload/${SAMPLE_PATH}`, { headers: bearer(token) }));

    expect(await check(await provider.sign(claims))).toEqual([200, null]);
    // The provider rolls its keys: the new one signs, the old one is still published.
    await provider.rotate([newKey, oldKey]);
    const fresh = await provider.sign(claims, { key: newKey });
    // Within the cool-down after the last fetch, an unknown kid is refused without asking the provider.
    expect(await check(fresh)).toEqual([401, 'SDC_TOKEN_UNKNOWN_KEY']);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31_000 });
    expect(await check(await provider.sign(claims, { key: newKey }))).toEqual([200, null]);
    expect(await check(await provider.sign(claims, { key: oldKey }))).toEqual([200, null]);
  });

  it('answer 503 with Retry-After, never an anonymous answer, when the provider cannot be reached', async () => {
    provider = await startTestProvider();
    server = await startTestServer({}, provider.env);
    const token = await provider.sign({ sub: 'rita', groups: ['mission-team'] });
    await provider.stop();
    for (const url of [`/query`, `/upload/${SAMPLE_PATH}`]) {
      const res = await fetch(`${server.url}${url}`, { headers: bearer(token) });
      expect(await codeOf(res)).toEqual([503, 'SDC_OIDC_UNAVAILABLE']);
      expect(res.headers.get('retry-after')).toBe('5');
    }
    // Back: the next request after the short retry pause is verified.
    await provider.start();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6_000 });
    expect((await fetch(`${server.url}/query`, { headers: bearer(await provider.sign({ sub: 'rita' })) })).status).toBe(200);
  });
});
