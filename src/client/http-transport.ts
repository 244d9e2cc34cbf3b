import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { asClientError } from './client-errors.js';

export interface TransportOptions {
  /** Base address of the API, e.g. https://data.example.org or http://127.0.0.1:8080/api. */
  readonly baseUrl: string;
  /** Sent as `X-API-Key` to the API only, never to a signed object-store address. */
  readonly apiKey?: string;
  readonly connectTimeoutMs: number;
  /** Longest silence allowed while waiting for headers or between body chunks. */
  readonly idleTimeoutMs: number;
}

export type Response = Dispatcher.ResponseData;

export interface OutboundRequest {
  readonly method?: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly headers?: Record<string, string>;
  readonly body?: Readable | string;
  /** Aborts the request (and its answer's body). */
  readonly signal?: AbortSignal;
}

/**
 * HTTP for the SDK (undici): one connection pool, idle time-outs instead of whole-transfer
 * ones (a 10 GB download may take an hour, a silent socket must not), the API key on API
 * calls only. Any failure to get an answer becomes a NetworkError.
 */
export class Transport {
  private readonly agent: Agent;
  readonly baseUrl: string;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.idleTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
    });
  }

  /** GET `<base><pathAndQuery>` with the key; `extra` headers replace the defaults (e.g. Accept). */
  api(pathAndQuery: string, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9', ...extra };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    return this.send(`${this.baseUrl}${pathAndQuery}`, { headers, signal });
  }

  /** Another method on the API, with the key; `json`, when given, is sent as the body. */
  apiCall(method: 'POST' | 'DELETE', pathAndQuery: string, json?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9' };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    if (json === undefined) return this.send(`${this.baseUrl}${pathAndQuery}`, { method, headers });
    headers['content-type'] = 'application/json';
    return this.send(`${this.baseUrl}${pathAndQuery}`, { method, headers, body: JSON.stringify(json) });
  }

  /** A request to an address the service handed out (signed object-store address). */
  signed(url: string, req: OutboundRequest): Promise<Response> {
    return this.send(url, req);
  }

  private async send(url: string, req: OutboundRequest): Promise<Response> {
    try {
      return await request(url, {
        dispatcher: this.agent,
        method: req.method ?? 'GET',
        headers: req.headers ?? {},
        body: req.body ?? null,
        signal: req.signal,
      });
    } catch (err) {
      throw asClientError(err, `${req.method ?? 'GET'} ${redact(url)}`);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The text an error answer carries: a JSON string decoded, plain text as is. */
export async function readMessage(res: Response): Promise<string> {
  let text: string;
  try {
    text = await res.body.text();
  } catch {
    return '';
  }
  if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'string') return value;
    } catch {
      // not JSON after all: show it as sent
    }
  }
  return text;
}

/** Drops a body nobody will read, so the connection goes back to the pool. */
export async function discard(res: Response): Promise<void> {
  await res.body.dump().catch(() => undefined);
}

/** An address without its query string, for messages: signatures never reach a terminal or log. */
export function redact(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

/** `a/b c/d` -> `a/b%20c/d`: each segment encoded, the slashes kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
