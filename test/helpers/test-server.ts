import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadServerConfig, type ServerSettings } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { AppOptions } from '../../src/http/app.js';

export interface TestServer extends RunningServer {
  /** The server's SDC_HOME, a fresh temporary folder. */
  readonly home: string;
  /** Stops the server and removes its home. */
  stop(): Promise<void>;
}

/** A real server on a loopback port (chosen by the OS), on the embedded default in a fresh SDC_HOME. */
export async function startTestServer(
  settings: ServerSettings = {},
  env: NodeJS.ProcessEnv = {},
  log: Logger = pino({ level: 'silent' }),
  build: Pick<AppOptions, 'feed'> = {},
): Promise<TestServer> {
  const home = settings.home ?? (await mkdtemp(join(tmpdir(), 'sdc-test-')));
  // Uploads without keys unless a test asks for keys (S3 and PostgreSQL require them by default: fail closed).
  const keys = settings.requireKeys ?? env.SDC_REQUIRE_KEYS ?? 'false';
  const config = loadServerConfig(env, { port: '0', host: '127.0.0.1', logLevel: 'silent', ...settings, requireKeys: keys, home });
  const server = await startServer(config, log, build);
  return Object.assign(Object.create(null) as object, server, {
    home,
    close: () => server.close(),
    async stop() {
      await server.close();
      await rm(home, { recursive: true, force: true });
    },
  }) as TestServer;
}

export const SAMPLE_NAME = 'imap_swe_l1a_sci_20240105_20240105_v00-01.cdf';
export const SAMPLE_PATH = `imap/swe/l1a/2024/01/${SAMPLE_NAME}`;

/** GET /upload, then PUT the bytes the way the mission's client does (empty Content-Type). */
export async function uploadFile(baseUrl: string, path: string, bytes: Uint8Array | string): Promise<Response> {
  const res = await fetch(`${baseUrl}/upload/${path}`);
  if (res.status !== 200) throw new Error(`upload address for ${path}: ${res.status} ${await res.text()}`);
  const address = (await res.json()) as string;
  return fetch(address, { method: 'PUT', body: bytes, headers: { 'Content-Type': '' } });
}
