import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingLifetime, UNSTATED_SESSION_SECONDS } from '../../src/store/s3/signing-lifetime.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';
import { SAMPLE_PATH, startTestServer, uploadFile, type TestServer } from '../helpers/test-server.js';

// docs/deploy.md "Credentials and address lifetimes": an S3 address dies with the credentials that
// signed it, so it is never signed for longer than they live, and the answer says when it dies.

describe('the lifetime of an S3 address', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  it('is the one asked for with long-term keys', () => {
    expect(signingLifetime(86400, {}, now)).toBe(86400);
  });
  it('is capped to the credentials’ stated expiry, never below a second', () => {
    expect(signingLifetime(86400, { sessionToken: 't', expiration: new Date(now + 5400_000) }, now)).toBe(5400);
    expect(signingLifetime(600, { expiration: new Date(now + 5400_000) }, now)).toBe(600);
    expect(signingLifetime(86400, { expiration: new Date(now - 1000) }, now)).toBe(1);
  });
  it('is capped to an hour for session credentials whose expiry nobody states (a Lambda role’s, from its environment)', () => {
    expect(signingLifetime(86400, { sessionToken: 't' }, now)).toBe(UNSTATED_SESSION_SECONDS);
    expect(signingLifetime(900, { sessionToken: 't' }, now)).toBe(900);
  });
});

describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'download addresses on S3 outliving their signer' : `download addresses on S3: ${S3_SKIPPED}`, () => {
  let s3: S3TestServer;
  let server: TestServer | undefined;
  beforeAll(async () => {
    s3 = await startS3TestServer();
  });
  afterAll(async () => {
    delete process.env.AWS_CREDENTIAL_EXPIRATION;
    await server?.stop();
    await s3?.stop();
  });

  const download = async () => {
    const res = await fetch(`${server!.url}/download/${SAMPLE_PATH}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    return { res, location, expiresIn: Number(location.searchParams.get('X-Amz-Expires')) };
  };

  it('signed by credentials that expire in 10 minutes: the address lives 10 minutes, and the answer says until when', async () => {
    // The SDK's environment credentials with a stated expiry, as a role's are.
    const expiry = Date.now() + 600_000;
    process.env.AWS_CREDENTIAL_EXPIRATION = new Date(expiry).toISOString();
    server = await startTestServer({ store: s3.storeUrl, requireKeys: 'false' });
    expect((await uploadFile(server.url, SAMPLE_PATH, 'signed for as long as the signer lives')).status).toBe(200);
    const { res, location, expiresIn } = await download();
    expect(expiresIn).toBeGreaterThan(500);
    expect(expiresIn).toBeLessThanOrEqual(600);
    const said = Date.parse(res.headers.get('x-download-expires')!);
    expect(Math.abs(said - expiry)).toBeLessThan(5000);
    expect(await (await fetch(location)).text()).toBe('signed for as long as the signer lives');
    // The Metalink document signs its addresses the same way, and says for how long.
    const metalink = await (await fetch(`${server.url}/query?format=metalink`)).text();
    const signedFor = Number(/signed for (\d+) s/.exec(metalink)?.[1]);
    expect(signedFor).toBeLessThanOrEqual(600);
    expect(Number(new URL(/<url>([^<]*)<\/url>/.exec(metalink)![1]!.replace(/&amp;/g, '&')).searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(600);
    await server.stop();
    server = undefined;
  });

  it('signed by long-term keys: SDC_DOWNLOAD_TTL as configured, and no X-Download-Expires', async () => {
    delete process.env.AWS_CREDENTIAL_EXPIRATION;
    server = await startTestServer({ store: s3.storeUrl, requireKeys: 'false' });
    const { res, expiresIn } = await download();
    expect(expiresIn).toBe(86400);
    expect(res.headers.get('x-download-expires')).toBeNull();
  });
});
