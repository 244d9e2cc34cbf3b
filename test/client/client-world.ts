import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { RecordingProxy } from '../helpers/recording-proxy.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A real server behind a recording proxy, the server's signed addresses pointing at
 * the proxy too, and a scratch folder. The CLI talks to `url`.
 */
export interface ClientWorld {
  readonly server: TestServer;
  readonly proxy: RecordingProxy;
  /** Where the client is pointed: the proxy. */
  readonly url: string;
  /** `IMAP_DATA_ACCESS_URL` for the CLI. */
  readonly env: Record<string, string>;
  readonly scratch: string;
  /** A new empty folder under the scratch folder. */
  folder(name: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startClientWorld(): Promise<ClientWorld> {
  const proxy = await RecordingProxy.start();
  const server = await startTestServer({ publicUrl: proxy.url });
  proxy.target = server.url;
  const scratch = await mkdtemp(join(tmpdir(), 'sdc-client-'));
  return {
    server,
    proxy,
    url: proxy.url,
    env: { IMAP_DATA_ACCESS_URL: proxy.url },
    scratch,
    async folder(name) {
      const dir = join(scratch, name);
      await mkdir(dir, { recursive: true });
      return dir;
    },
    async stop() {
      await proxy.close();
      await server.stop();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** Writes files (stored path -> bytes) under a data directory. */
export async function writeTree(dataDir: string, files: Readonly<Record<string, Uint8Array>>): Promise<void> {
  for (const [path, bytes] of Object.entries(files)) {
    const file = join(dataDir, ...path.split('/'));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
  }
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A tree across instruments, levels (l0 = pkts) and months, one file big enough to cut mid-transfer. */
export function sampleTree(): Record<string, Uint8Array> {
  return {
    'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240105_20240105_v00-01.cdf': randomBytes(1_500_000),
    'imap/swe/l1a/2024/01/imap_swe_l1a_sci_20240106_20240106_v00-01.cdf': randomBytes(2_000),
    'imap/mag/l1b/2024/03/imap_mag_l1b_norm_20240301_20240302_v01-00.cdf': randomBytes(70_000),
    'imap/hit/l0/2024/02/imap_hit_l0_raw_20240229_20240229_v00-02.pkts': randomBytes(0),
  };
}

/** What useWorldWithData hands its describe block: set before the block's first test. */
export interface WorldWithData {
  world: ClientWorld;
  /** The world's `data` folder, holding the tree. */
  dataDir: string;
}

/**
 * For one describe block: a client world whose `data` folder holds `tree`, started before the
 * block's tests and stopped after them (the setup of the upload tests).
 */
export function useWorldWithData(tree: Readonly<Record<string, Uint8Array>>): WorldWithData {
  const ctx = {} as WorldWithData;
  beforeAll(async () => {
    ctx.world = await startClientWorld();
    ctx.dataDir = await ctx.world.folder('data');
    await writeTree(ctx.dataDir, tree);
  });
  afterAll(() => ctx.world?.stop());
  return ctx;
}
