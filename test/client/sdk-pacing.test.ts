import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BusyError, Client } from '../../src/client/index.js';
import { sampleTree, startClientWorld, writeTree, type ClientWorld } from './client-world.js';

describe('the SDK paces itself on 429 and 503 with Retry-After (docs/client.md, "Pacing")', { timeout: 60_000 }, () => {
  let world: ClientWorld;
  let dataDir: string;
  const tree = sampleTree();
  const small = Object.keys(tree).find((p) => p.includes('20240106'))!;

  beforeAll(async () => {
    world = await startClientWorld();
    dataDir = await world.folder('data');
    await writeTree(dataDir, tree);
  });
  afterAll(() => world.stop());
  beforeEach(() => world.proxy.reset());

  it('waits the Retry-After of a 429 and of a 503 without spending a retry, all workers together', async () => {
    const pauses: number[] = [];
    // No retries at all: only waits that are not counted as failed attempts can succeed here.
    const client = new Client({ url: world.url, retry: { retries: 0 }, onPause: (ms) => pauses.push(ms) });
    try {
      world.proxy.inject((r) => r.url.startsWith('/query'), { status: 429, headers: { 'retry-after': '1' } }, 1);
      world.proxy.inject((r) => r.url.startsWith('/query'), { status: 503, headers: { 'retry-after': '1' } }, 1);
      const started = Date.now();
      const results = await Promise.all([client.query({ instrument: 'swe' }), client.query({ instrument: 'mag' })]);
      expect(results.map((r) => r.length)).toEqual([0, 0]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      // One pause for the whole client (the second answer's wait did not go past the first's).
      expect(pauses.length).toBeGreaterThanOrEqual(1);
      expect(world.proxy.seen('/query')).toHaveLength(4);
    } finally {
      await client.close();
    }
  });

  it('starts a streamed PUT again on a 503 with Retry-After, uncounted', async () => {
    const client = new Client({ url: world.url, retry: { retries: 0 } });
    try {
      world.proxy.inject((r) => r.method === 'PUT', { status: 503, headers: { 'retry-after': '1' } }, 1);
      expect(await client.upload(join(dataDir, small), { dataDir })).toMatchObject({ path: small, status: 'uploaded' });
      expect(world.proxy.seen('/upload/')).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('gives up with a BusyError past its bound on such waits', async () => {
    const client = new Client({ url: world.url, retry: { retries: 0, maxBusyWaitMs: 1500 } });
    try {
      world.proxy.inject((r) => r.url.startsWith('/query'), { status: 429, headers: { 'retry-after': '1' } }, 5);
      const error = await client.query({ instrument: 'hit' }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(BusyError);
      expect((error as BusyError).message).toContain('(429)');
    } finally {
      await client.close();
    }
  });
});
