import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream/promises';
import type { EngineRequest, EngineTimeouts, HttpEngine, Response, ResponseBody } from './http-engine.js';

/** A time-out as undici names it, so messages and retries treat both engines alike. */
function timedOut(code: string, what: string): Error {
  return Object.assign(new Error(what), { code });
}

/** The answer's stream with undici's ways of reading it whole. */
function bodyOf(res: IncomingMessage): ResponseBody {
  const text = async (): Promise<string> => {
    res.setEncoding('utf8');
    let all = '';
    for await (const chunk of res) all += chunk as string;
    return all;
  };
  return Object.assign(res, {
    text,
    json: async (): Promise<unknown> => JSON.parse(await text()),
    dump: async (): Promise<void> => {
      res.resume();
      if (!res.complete) await new Promise<void>((resolve) => res.once('end', resolve).once('close', resolve));
    },
  });
}

/**
 * Requests through node:http(s), with keep-alive connections and the same time-outs as the
 * undici engine: for commands that send a few requests, where undici's import would cost more
 * than all of them (docs/performance.md, "CLI start-up").
 */
export class NodeHttpEngine implements HttpEngine {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  constructor(private readonly timeouts: EngineTimeouts) {}

  request(url: string, { method, headers, body, signal }: EngineRequest): Promise<Response> {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const { connectTimeoutMs, idleTimeoutMs } = this.timeouts;
    return new Promise<Response>((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(target, { method, headers, agent: secure ? this.https : this.http, signal }, (res) => {
        res.setTimeout(idleTimeoutMs, () => res.destroy(timedOut('UND_ERR_BODY_TIMEOUT', 'no data from the server within the idle time-out')));
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: bodyOf(res) });
      });
      req.on('error', reject);
      req.on('socket', (socket) => {
        if (!socket.connecting) return req.setTimeout(idleTimeoutMs);
        const connecting = setTimeout(() => req.destroy(timedOut('UND_ERR_CONNECT_TIMEOUT', 'no connection within the connect time-out')), connectTimeoutMs);
        socket.once('connect', () => {
          clearTimeout(connecting);
          req.setTimeout(idleTimeoutMs);
        });
        socket.once('close', () => clearTimeout(connecting));
      });
      req.on('timeout', () => req.destroy(timedOut('UND_ERR_HEADERS_TIMEOUT', 'no answer from the server within the idle time-out')));
      if (body === null || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body ?? undefined);
      else pipeline(body, req).catch(reject);
    });
  }

  async close(): Promise<void> {
    this.http.destroy();
    this.https.destroy();
  }
}
