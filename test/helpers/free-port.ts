import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port nobody listens on now, for a program that must be told its port (nginx, radosgw,
 * a container on the host's network, a server restarted on the same port). Servers that can take
 * port 0 should: this one may be taken again before the caller binds it.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
