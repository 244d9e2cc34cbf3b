import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy a fault test controls, between a service and a dependency (PostgreSQL, the S3
 * gateway): it passes bytes both ways until told to `cut` every connection (as a failover or a
 * recycled connection does), `refuse` new ones for a while (the listener closed: ECONNREFUSED),
 * or `blackhole` (connections accepted, nothing forwarded either way, as a partitioned network),
 * then `resume`; or `retarget` it to another server. Loopback only.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | undefined }>();
  private held = false;
  private readonly waiting: (() => void)[] = [];
  port = 0;

  constructor(
    private targetHost: string,
    private targetPort: number,
  ) {}

  /** Sends new connections to another server from now on and cuts the old ones, as a failover's moved DNS name does. */
  retarget(host: string, port: number): void {
    this.targetHost = host;
    this.targetPort = port;
    this.cut();
  }

  /** Connections from clients now open (a client that aborts a request closes its own). */
  get openConnections(): number {
    return this.pairs.size;
  }

  get url(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await this.listen(0);
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        this.port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(client: Socket): void {
    const pair: { client: Socket; upstream: Socket | undefined } = { client, upstream: undefined };
    this.pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    client.pause();
    const open = () => {
      if (client.destroyed) return;
      const upstream = connect(this.targetPort, this.targetHost);
      pair.upstream = upstream;
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    };
    if (this.held) this.waiting.push(open);
    else open();
  }

  /** Ends every connection at once, both sides (the dependency sees its client vanish). */
  cut(): void {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream?.destroy();
    }
    this.pairs.clear();
  }

  /** Cuts every connection and refuses new ones until `resume`. */
  async refuse(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.cut();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Forwards nothing, either way, on any connection (new ones are accepted and held) until `resume`. */
  blackhole(): void {
    this.held = true;
    for (const { client, upstream } of this.pairs) {
      if (upstream) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        upstream.pause();
      }
      client.pause();
    }
  }

  async resume(): Promise<void> {
    if (!this.server) await this.listen(this.port);
    if (this.held) {
      this.held = false;
      for (const { client, upstream } of this.pairs) {
        if (!upstream) continue;
        client.pipe(upstream);
        upstream.pipe(client);
      }
      for (const open of this.waiting.splice(0)) open();
    }
  }

  async stop(): Promise<void> {
    await this.refuse();
  }
}
