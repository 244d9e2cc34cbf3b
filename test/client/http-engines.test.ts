import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, NetworkError } from '../../src/client/index.js';
import type { EngineKind } from '../../src/client/http-engine.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Both HTTP engines of the client (src/client/http-engine.ts) do the same thing against the
 * real server: undici (the SDK's default, uploads and downloads) and node:http (`sdc query`).
 */
describe.each<EngineKind>(['undici', 'node'])('the client through the %s engine', (engine) => {
  let server: TestServer;
  let work: string;
  let stalled: Server;

  beforeAll(async () => {
    server = await startTestServer();
    work = await mkdtemp(join(tmpdir(), 'sdc-engines-'));
    // Answers its headers, then never sends the body.
    stalled = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders());
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    stalled.closeAllConnections();
    stalled.close();
    await server.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('uploads, queries and downloads a file, its SHA-256 checked', async () => {
    const client = new Client({ url: server.url, engine });
    try {
      const local = join(work, engine, 'up', SAMPLE_PATH);
      await mkdir(dirname(local), { recursive: true });
      await writeFile(local, `bytes through ${engine}`);
      expect(await client.upload(local, { dataDir: join(work, engine, 'up') })).toMatchObject({ path: SAMPLE_PATH, status: 'uploaded' });
      expect((await client.query({ instrument: 'swe' })).map((r) => r.file_path)).toEqual([SAMPLE_PATH]);
      const got = await client.download(SAMPLE_PATH, { dest: join(work, engine, 'down') });
      expect(got).toMatchObject({ status: 'downloaded', verified: true });
      expect(await readFile(got.localPath, 'utf8')).toBe(`bytes through ${engine}`);
    } finally {
      await client.close();
    }
  });

  it('gives up on an answer whose body stops coming, after the idle time-out', async () => {
    const { port } = stalled.address() as AddressInfo;
    const client = new Client({ url: `http://127.0.0.1:${port}`, engine, idleTimeoutMs: 300, retry: { retries: 0 } });
    try {
      await expect(client.query({})).rejects.toBeInstanceOf(NetworkError);
    } finally {
      await client.close();
    }
  });
});
