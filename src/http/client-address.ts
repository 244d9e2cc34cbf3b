import { BlockList, isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The reverse proxies whose forwarding headers are believed (SDC_TRUSTED_PROXIES); undefined when none. */
    trustedProxies: BlockList | undefined;
  }
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) as `10.0.0.1`, so IPv4 CIDRs match it. */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** The trusted proxies as a BlockList (an address list with CIDRs), from validated config entries. */
export function trustedProxyList(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(plain(address), family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/** Sets the trusted proxies of an app, read by clientAddress. */
export function trustProxies(app: FastifyInstance, entries: readonly string[]): void {
  app.decorate('trustedProxies', trustedProxyList(entries));
}

/** One hop of `Forwarded: for=...` (RFC 7239): `192.0.2.1`, `"192.0.2.1:4711"`, `"[2001:db8::1]:4711"`; undefined if not an address. */
function forwardedFor(element: string): string | undefined {
  for (const pair of element.split(';')) {
    const eq = pair.indexOf('=');
    if (pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
    let value = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
    if (bracketed) value = bracketed[1]!;
    else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
    return isIP(value) ? value : undefined;
  }
  return undefined;
}

/** The addresses a proxy chain claims, nearest last: `Forwarded` when sent, else `X-Forwarded-For`. */
function claimedChain(request: FastifyRequest): (string | undefined)[] {
  const join = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : value);
  const forwarded = join(request.headers.forwarded);
  if (forwarded !== undefined) return forwarded.split(',').map(forwardedFor);
  const xff = join(request.headers['x-forwarded-for']);
  if (xff === undefined) return [];
  return xff.split(',').map((hop) => (isIP(hop.trim()) ? hop.trim() : undefined));
}

const memo = new WeakMap<FastifyRequest, string>();

/** The client address of a request whose connection was gone before anyone asked. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The address of the client a request is from: the one used in request logs, per-address
 * rate limits and the live feed's per-address cap (docs/self-hosted.md, Reverse proxy). It is
 * the connection's peer, unless the peer is a trusted proxy (SDC_TRUSTED_PROXIES): then the
 * forwarding header is walked from its nearest hop back, past every trusted proxy, and the
 * first address that is not one is the client. Hops a client wrote itself sit further back
 * than that, so nobody chooses their own address; a hop that is not an address ends the walk
 * at the proxy that passed it on.
 */
export function clientAddress(request: FastifyRequest): string {
  const trusted = request.server.trustedProxies;
  // A connection a client has already reset has no peer address left (Node leaves it
  // undefined): such a request still gets its access line and its budget, under one name.
  if ((request.ip as string | undefined) === undefined) return UNKNOWN_CLIENT;
  const peer = plain(request.ip);
  if (trusted === undefined) return peer;
  const known = memo.get(request);
  if (known !== undefined) return known;
  let client = peer;
  const chain = claimedChain(request);
  while (trusted.check(client, isIP(client) === 6 ? 'ipv6' : 'ipv4') && chain.length > 0) {
    const hop = chain.pop();
    if (hop === undefined) break;
    client = plain(hop);
  }
  memo.set(request, client);
  return client;
}
