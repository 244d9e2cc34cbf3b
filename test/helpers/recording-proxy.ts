import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * What to do instead of forwarding plainly: answer with a status; forward and cut the
 * answer after some body bytes; or forward and drop the connection before any answer
 * (the request took effect, the client cannot know).
 */
export type Fault =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly cutAfter: number }
  | { readonly stallAfter: number }
  | { readonly dropAnswer: true };

interface PendingFault {
  readonly match: (req: SeenRequest) => boolean;
  readonly fault: Fault;
  times: number;
}

/**
 * A pass-through HTTP proxy in front of a real server that records every request and
 * can break some on purpose (a 5xx, a connection cut mid-body). Point the client at it,
 * and the server's SDC_PUBLIC_URL too, so signed addresses also pass through it.
 */
export class RecordingProxy {
  readonly requests: SeenRequest[] = [];
  /** Where requests go; set once the server behind is listening. */
  target = '';
  private readonly faults: PendingFault[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<RecordingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new RecordingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => proxy.handle(req, res));
    return proxy;
  }

  /** The next `times` requests that `match` meet `fault`. */
  inject(match: (req: SeenRequest) => boolean, fault: Fault, times = 1): void {
    this.faults.push({ match, fault, times });
  }

  /** Forgets what was seen and any fault not yet met. */
  reset(): void {
    this.requests.length = 0;
    this.faults.length = 0;
  }

  /** Requests whose path starts with a prefix, e.g. `/store/` (signed transfers) or `/query`. */
  seen(prefix: string, method?: string): SeenRequest[] {
    return this.requests.filter((r) => r.url.startsWith(prefix) && (method === undefined || r.method === method));
  }

  /** Cuts every open connection (a network outage); the proxy keeps listening. */
  dropConnections(): void {
    this.server.closeAllConnections();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    this.requests.push(seen);
    const pending = this.faults.find((f) => f.times > 0 && f.match(seen));
    if (pending) pending.times--;
    const fault = pending?.fault;
    if (fault && 'status' in fault) {
      req.resume();
      res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers }).end(fault.body ?? `injected ${fault.status}`);
      return;
    }
    const target = new URL(this.target);
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        if (fault && 'dropAnswer' in fault) {
          answer.resume();
          return void res.socket?.destroy();
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!fault) return void answer.pipe(res);
        // Forward the first `cutAfter` body bytes, then drop the connection mid-answer; or the
        // first `stallAfter`, then send nothing more on a connection left open (a stalled transfer).
        const limit = 'cutAfter' in fault ? fault.cutAfter : fault.stallAfter;
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (sent >= limit) return;
          const piece = chunk.subarray(0, limit - sent);
          sent += piece.length;
          if (sent < limit) return void res.write(piece);
          answer.destroy();
          res.write(piece, () => 'cutAfter' in fault && res.socket?.destroy());
        });
      },
    );
    upstream.on('error', () => res.socket?.destroy());
    // A client gone before its body's end is gone upstream too, as with a real proxy: the
    // server must not keep waiting for the rest of a body that will never come.
    req.on('close', () => {
      if (!req.complete) upstream.destroy();
    });
    // A client gone before the answer's end (a live feed it stopped) is gone upstream too: the
    // server sees the close and frees what the connection held (a feed's slot).
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
