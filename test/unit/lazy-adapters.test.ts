import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const src = (path: string) => JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src', path)).href);

/** The heavy optional packages (docs/performance.md, "Start-up: what a process loads"): loaded only when the configuration names them. */
const HEAVY = ['@aws-sdk/', '@smithy/', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http'];

/**
 * A fresh Node process (the test's own worker may have loaded anything) starts a server on the
 * local store, then opens an S3 store; it prints which heavy packages were loaded after each step.
 */
const SCRIPT = `
  import { createRequire } from 'node:module';
  const heavy = () => [...new Set(Object.keys(createRequire(import.meta.url).cache)
    .flatMap((path) => ${JSON.stringify(HEAVY)}.filter((name) => path.includes('/node_modules/' + name))))].sort();
  const { loadServerConfig } = await import(${src('config.ts')});
  const { startServer } = await import(${src('server.ts')});
  const { openStore } = await import(${src('store/open-store.ts')});
  const server = await startServer(loadServerConfig({}, { home: process.env.HOME_DIR, port: '0', host: '127.0.0.1', logLevel: 'silent' }));
  await server.close();
  const local = heavy();
  await openStore('s3://some-bucket?region=eu-west-1&endpoint=http://127.0.0.1:9', { signer: undefined, publicUrl: () => '' });
  console.log(JSON.stringify({ local, s3: heavy() }));
`;

describe('a server on the embedded default', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'sdc-lazy-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  // A fresh process loading the server through tsx: seconds, a minute on 2 loaded cores.
  it('never loads the AWS SDK nor the tracing SDK; an s3:// store loads the SDK', { timeout: 120_000 }, async () => {
    const { stdout } = await run(process.execPath, ['--import', TSX, '--input-type=module', '-e', SCRIPT], {
      env: { PATH: process.env.PATH ?? '', HOME_DIR: home },
    });
    const loaded = JSON.parse(stdout.trim().split('\n').at(-1)!) as { local: string[]; s3: string[] };
    expect(loaded.local).toEqual([]);
    expect(loaded.s3).toContain('@aws-sdk/');
  });
});
