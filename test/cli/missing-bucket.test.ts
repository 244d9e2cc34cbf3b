import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { HAVE_S3, S3_SKIPPED, startS3TestServer, type S3TestServer } from '../helpers/s3-test-server.js';

// A store URL naming a bucket nobody created (docs/self-hosted.md, Create the bucket): the
// commands say which bucket and how to create it, not the SDK's bare "UnknownError".
describe.skipIf(!HAVE_S3)(HAVE_S3 ? 'a bucket that does not exist' : `a bucket that does not exist: ${S3_SKIPPED}`, { timeout: 180_000 }, () => {
  let s3: S3TestServer;
  let home: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    s3 = await startS3TestServer();
    home = await mkdtemp(join(tmpdir(), 'sdc-no-bucket-'));
    env = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY! };
  });
  afterAll(async () => {
    await s3?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it.each([
    [['serve', '--port', '0']],
    [['reconcile', '--create']],
  ])('sdc %j names the bucket and how to create it, and exits 1', async (args) => {
    const store = s3.storeUrl.replace(`s3://${s3.bucket}?`, 's3://never-created?');
    const result = await runCli([...args, '--home', home, '--store', store], { env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`sdc: the bucket "never-created" named by SDC_STORE does not exist at ${s3.endpoint}; create it first`);
    expect(result.stderr).toContain(`aws s3api create-bucket --bucket never-created --endpoint-url ${s3.endpoint}`);
    expect(result.stderr).not.toContain('UnknownError');
  });
});
