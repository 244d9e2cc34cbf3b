import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabaseSecret } from '../../src/lambda/database-secret.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:SdcDatabaseSecret-AbCdEf';

/**
 * The AWS Parameters and Secrets Lambda extension stood in for by a local server answering in
 * its shape (GetSecretValue's JSON), which cannot run here; the function's code is the real one.
 */
describe('the database password fetched at cold start (SDC_CATALOG_SECRET_ARN)', () => {
  let server: Server;
  let port: string;
  const seen: { url?: string; headers?: IncomingHttpHeaders } = {};
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.url = req.url;
      seen.headers = req.headers;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = String((server.address() as AddressInfo).port);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const env = (extra: Record<string, string> = {}) => ({
    SDC_CATALOG: 'postgres://proxy.example.internal:5432/sdc?schema=sdc&sslmode=verify-full',
    SDC_CATALOG_SECRET_ARN: SECRET_ARN,
    AWS_SESSION_TOKEN: 'the-session-token',
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: port,
    ...extra,
  });

  it('puts the secret\'s user and password into SDC_CATALOG, asking with the session token', async () => {
    answer = {
      status: 200,
      body: { ARN: SECRET_ARN, Name: 'SdcDatabaseSecret', SecretString: JSON.stringify({ username: 'sdc', password: 'p@ss/word', engine: 'postgres' }), VersionStages: ['AWSCURRENT'] },
    };
    const out = await withDatabaseSecret(env());
    expect(out.SDC_CATALOG).toBe('postgres://sdc:p%40ss%2Fword@proxy.example.internal:5432/sdc?schema=sdc&sslmode=verify-full');
    expect(new URL(out.SDC_CATALOG!).password).toBe('p%40ss%2Fword');
    expect(seen.url).toBe(`/secretsmanager/get?secretId=${encodeURIComponent(SECRET_ARN)}`);
    expect(seen.headers?.['x-aws-parameters-secrets-token']).toBe('the-session-token');
  });

  it('leaves the environment alone without SDC_CATALOG_SECRET_ARN, and says what is wrong when the secret cannot be read', async () => {
    const plain = { SDC_CATALOG: 'postgres://u:p@h/db' };
    expect(await withDatabaseSecret(plain)).toBe(plain);
    answer = { status: 400, body: { message: 'AccessDeniedException' } };
    await expect(withDatabaseSecret(env())).rejects.toThrow(/could not be read \(400\).*secretsmanager:GetSecretValue/);
    answer = { status: 200, body: { SecretString: JSON.stringify({ username: 'sdc' }) } };
    await expect(withDatabaseSecret(env())).rejects.toThrow(/holds no "password"/);
    await expect(withDatabaseSecret(env({ SDC_CATALOG: 'sqlite:x.db' }))).rejects.toThrow(/must be a postgres:\/\/ URL/);
  });
});
