import type { Readable } from 'node:stream';

/** An answer's body: a stream, or read whole. undici's answers have this shape, and so do node-http-engine.ts's. */
export interface ResponseBody extends Readable {
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** Reads and drops the rest, so the connection can serve the next request. */
  dump(): Promise<void>;
}

export interface Response {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: ResponseBody;
}

export interface EngineRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Readable | string | Buffer | null;
  readonly signal?: AbortSignal;
}

/** What sends the requests of a Transport: undici (undici-engine.ts) or node:http (node-http-engine.ts). */
export interface HttpEngine {
  request(url: string, req: EngineRequest): Promise<Response>;
  close(): Promise<void>;
}

export interface EngineTimeouts {
  readonly connectTimeoutMs: number;
  /** Longest silence while waiting for headers or between body chunks. */
  readonly idleTimeoutMs: number;
}

/**
 * Which engine: `undici` for many requests (uploads, downloads: its connection pool and parser
 * cost the least per request), `node` for a few (`sdc query`: node:http is part of Node, so it
 * loads in a fraction of the time undici's import takes; docs/performance.md, "CLI start-up").
 */
export type EngineKind = 'undici' | 'node';

export async function openEngine(kind: EngineKind, timeouts: EngineTimeouts): Promise<HttpEngine> {
  if (kind === 'node') return new (await import('./node-http-engine.js')).NodeHttpEngine(timeouts);
  return new (await import('./undici-engine.js')).UndiciEngine(timeouts);
}
