import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putBytes } from '../contract/store-contract.js';
import { HAVE_PRODUCTION_BACKENDS, PRODUCTION_BACKENDS_LABEL, startProductionBackends, type ProductionBackends } from '../helpers/backends.js';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { deviceSignIn } from '../helpers/oidc-sign-in.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PATH = 'imap/hit/l1a/2024/02/imap_hit_l1a_sci_20240212_20240212_v00-01.cdf';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

// Signed-in callers behind a load balancer (docs/deploy.md "Sign-in with Keycloak"): two
// instances on one PostgreSQL and one S3 bucket verify the same provider's tokens alike and
// record the same names, whichever instance a request reaches; a token refused by one is
// refused by the other with the same code.
describe.skipIf(!HAVE_PRODUCTION_BACKENDS)(PRODUCTION_BACKENDS_LABEL, () => {
  describe('tokens of one provider on two instances', () => {
    let backends: ProductionBackends;
    let provider: TestProvider;
    let a: TestServer;
    let b: TestServer;

    beforeAll(async () => {
      [backends, provider] = await Promise.all([startProductionBackends(), startTestProvider()]);
      [a, b] = await Promise.all([startTestServer(backends.settings, provider.env), startTestServer(backends.settings, provider.env)]);
    }, 240_000);
    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await provider?.stop();
      await backends?.stop();
    });

    it('an upload signed in through A is recorded as its name; a curator signed in through B withdraws it as theirs', { timeout: 120_000 }, async () => {
      const ursula = await deviceSignIn(provider, 'ursula');
      const res = await fetch(`${a.url}/upload/${PATH}`, { headers: bearer(ursula.access_token) });
      expect(res.status).toBe(200);
      expect((await putBytes((await res.json()) as string, Buffer.from('hit counts\n'))).status).toBe(200);
      // No notification is set up: B's download indexes the staged upload on the spot.
      expect((await fetch(`${b.url}/download/${PATH}`, { redirect: 'manual' })).status).toBe(302);
      expect(await (await fetch(`${b.url}/query?instrument=hit`)).json()).toMatchObject([{ file_path: PATH, uploader: 'oidc:ursula' }]);

      const carol = await deviceSignIn(provider, 'carol');
      for (const server of [a, b]) {
        const whoami = (await (await fetch(`${server.url}/auth/whoami`, { headers: bearer(carol.access_token) })).json()) as Record<string, string>;
        expect(whoami).toMatchObject({ name: 'oidc:carol', role: 'curator', via: 'token' });
      }
      const withdrawn = await fetch(`${b.url}/withdraw/${PATH}`, {
        method: 'POST',
        headers: { ...bearer(carol.access_token), 'Content-Type': 'application/json' },
        body: '{"reason":"wrong calibration table"}',
      });
      expect(withdrawn.status).toBe(200);
      expect(await (await fetch(`${a.url}/query?instrument=hit&status=withdrawn`)).json()).toMatchObject([{ uploader: 'oidc:ursula', withdrawn_by: 'oidc:carol' }]);
    });

    it('a token either instance refuses, the other refuses with the same code', { timeout: 60_000 }, async () => {
      const { access_token } = await deviceSignIn(provider, 'ursula');
      const [header, payload, signature] = access_token.split('.');
      const forged = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`;
      const answers = await Promise.all([a, b].map(async (server) => {
        const res = await fetch(`${server.url}/upload/${PATH.replace('v00-01', 'v00-02')}`, { headers: bearer(forged) });
        return [res.status, res.headers.get('x-error-code')];
      }));
      expect(answers[0]![0]).toBe(401);
      expect(answers[1]).toEqual(answers[0]);
    });
  });
});
