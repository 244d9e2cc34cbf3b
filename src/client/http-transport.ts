import type { Readable } from 'node:stream';
import { asClientError, BusyError, NetworkError, UnreachableError } from './client-errors.js';
import { openEngine, type EngineKind, type HttpEngine, type Response } from './http-engine.js';
import { DEFAULT_MAX_BUSY_WAIT_MS, RequestPacer } from './request-pacing.js';
import { errorCodeOf, readMessage } from './answer-error.js';

export interface TransportOptions {
  /** Base address of the API, e.g. https://data.example.org or http://127.0.0.1:8080/api. */
  readonly baseUrl: string;
  /** Sent as `X-API-Key` to the API only, never to a signed object-store address. */
  readonly apiKey?: string;
  /** Without an API key, the signed-in user's token (docs/client.md, "Signing in"), sent as `Authorization: Bearer`. */
  readonly bearer?: () => Promise<string | undefined>;
  readonly connectTimeoutMs: number;
  /** Longest silence allowed while waiting for headers or between body chunks. */
  readonly idleTimeoutMs: number;
  /** Shared pace of every request (default: a pacer of this transport's own). */
  readonly pacer?: RequestPacer;
  /** Longest total wait on 429/503 + Retry-After for one request before it fails (default 15 min). */
  readonly maxBusyWaitMs?: number;
  /** Give up on the service after connections fail in a row (see connectionFailed); default true. */
  readonly failFast?: boolean;
  /** What sends the requests (http-engine.ts): undici by default, node:http for a command of a few requests. */
  readonly engine?: EngineKind;
}

/** Failures that mean nothing answers at the address (rather than a service that failed). */
export const NOTHING_THERE = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT)\b/;

/** Connection failures in a row, over at least UNREACHABLE_AFTER_MS, after which the service is taken as unreachable. */
const UNREACHABLE_AFTER_FAILURES = 5;
const UNREACHABLE_AFTER_MS = 5_000;
/** Once given up on, requests fail at once for this long; then one is let through to try again. */
const UNREACHABLE_FOR_MS = 30_000;

export type { Response };

export interface OutboundRequest {
  readonly method?: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly headers?: Record<string, string>;
  /** A string is sent again after a 429's wait; a file's bytes (a stream, or a small file's buffer) are not (see send). */
  readonly body?: Readable | string | Buffer;
  /** Aborts the request (and its answer's body). */
  readonly signal?: AbortSignal;
}

/**
 * HTTP for the SDK (undici): one connection pool, idle time-outs instead of whole-transfer
 * ones (a 10 GB download may take an hour, a silent socket must not), the API key on API
 * calls only. Any failure to get an answer becomes a NetworkError.
 */
export class Transport {
  /** Loaded on the first request: a command that sends none never loads an HTTP client. */
  private engine: Promise<HttpEngine> | undefined;
  readonly baseUrl: string;
  readonly pacer: RequestPacer;
  /** Connection failures since the last answer, and when the first of them happened. */
  private failuresInARow = 0;
  private firstFailureAt = 0;
  private unreachable: UnreachableError | undefined;
  private unreachableSince = 0;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.pacer = options.pacer ?? new RequestPacer();
  }

  private http(): Promise<HttpEngine> {
    const { connectTimeoutMs, idleTimeoutMs } = this.options;
    return (this.engine ??= openEngine(this.options.engine ?? 'undici', { connectTimeoutMs, idleTimeoutMs }));
  }

  /** GET `<base><pathAndQuery>` with the key; `extra` headers replace the defaults (e.g. Accept). */
  async api(pathAndQuery: string, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9', ...extra };
    await this.credentials(headers);
    return this.send(`${this.baseUrl}${pathAndQuery}`, { headers, signal });
  }

  /** Another method on the API, with the key; `json`, when given, is sent as the body. */
  async apiCall(method: 'POST' | 'DELETE', pathAndQuery: string, json?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9' };
    await this.credentials(headers);
    if (json === undefined) return this.send(`${this.baseUrl}${pathAndQuery}`, { method, headers });
    headers['content-type'] = 'application/json';
    return this.send(`${this.baseUrl}${pathAndQuery}`, { method, headers, body: JSON.stringify(json) });
  }

  /** The API key when there is one (it wins), else the signed-in user's token. */
  private async credentials(headers: Record<string, string>): Promise<void> {
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    else {
      const token = await this.options.bearer?.();
      if (token) headers.authorization = `Bearer ${token}`;
    }
  }

  /** A request to an address the service handed out (signed object-store address). */
  signed(url: string, req: OutboundRequest): Promise<Response> {
    return this.send(url, req);
  }

  /**
   * One request, paced (request-pacing.ts): a 429 or 503 with Retry-After pauses every
   * request of this client for that long and, when the body can be sent again (none, or a
   * string), sends it again without counting a failed attempt; a streamed body is answered
   * with a BusyError instead (retry.ts starts the operation again, uncounted).
   */
  private async send(url: string, req: OutboundRequest): Promise<Response> {
    const what = `${req.method ?? 'GET'} ${redact(url)}`;
    // A file's bytes (stream or buffer) start the operation again with a fresh address, as before.
    const replayable = req.body === undefined || typeof req.body === 'string';
    for (let waited = 0; ; ) {
      if (this.unreachable && Date.now() - this.unreachableSince < UNREACHABLE_FOR_MS) throw this.unreachable;
      // A long-lived client tries again now and then; one more failure gives up again at once.
      if (this.unreachable) this.failuresInARow = UNREACHABLE_AFTER_FAILURES - 1;
      this.unreachable = undefined;
      await this.pacer.ready(req.signal);
      const engine = await this.http();
      let res: Response;
      try {
        res = await engine.request(url, {
          method: req.method ?? 'GET',
          headers: req.headers ?? {},
          body: req.body ?? null,
          signal: req.signal,
        });
      } catch (err) {
        throw this.connectionFailed(asClientError(err, what));
      }
      this.failuresInARow = 0;
      this.unreachable = undefined;
      const wait = this.pacer.observe(res.statusCode, res.headers);
      if (wait === undefined) return res;
      waited += wait;
      const maxWait = this.options.maxBusyWaitMs ?? DEFAULT_MAX_BUSY_WAIT_MS;
      if (replayable && waited <= maxWait) {
        await discard(res);
        continue;
      }
      if (waited > maxWait && res.statusCode !== 429) return res;
      const text = (await readMessage(res)).trim().slice(0, 300);
      // Past the bound, the whole wait is reported, so retry.ts does not wait again.
      throw new BusyError(`${what}: the service asks to come back later (${res.statusCode}): ${text}`, res.statusCode, waited > maxWait ? waited : wait, errorCodeOf(res));
    }
  }

  /** Counts a failure to connect; enough of them in a row, over long enough, and the service is given up on. */
  private connectionFailed(error: Error): Error {
    if (this.options.failFast === false || !(error instanceof NetworkError) || !NOTHING_THERE.test(error.message)) return error;
    const now = Date.now();
    if (this.failuresInARow++ === 0) this.firstFailureAt = now;
    if (this.failuresInARow >= UNREACHABLE_AFTER_FAILURES && now - this.firstFailureAt >= UNREACHABLE_AFTER_MS) {
      const seconds = Math.round((now - this.firstFailureAt) / 1000);
      this.unreachableSince = now;
      this.unreachable = new UnreachableError(
        `nothing answers at ${this.baseUrl}: ${this.failuresInARow} connections in a row failed over ${seconds} s (${error.message}); giving up`,
      );
    }
    return error;
  }

  /** Set once the service is given up on (see connectionFailed); requests then fail at once. */
  get givenUp(): UnreachableError | undefined {
    return this.unreachable;
  }

  async close(): Promise<void> {
    await (await this.engine)?.close();
  }
}

// How an error answer is read (its text, its X-Error-Code), kept where callers have always found it.
export { answerError, errorCodeOf, readMessage } from './answer-error.js';

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
