import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { rawExchange, rawGet } from '../helpers/raw-http.js';
import { SAMPLE_PATH, startTestServer, type TestServer } from '../helpers/test-server.js';

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createLogger('info', sink);
}


describe('protocol edges a hostile or broken client reaches', () => {
  let server: TestServer;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = await startTestServer({ maxObjectSize: '1000' }, {}, capturingLogger(lines));
  });
  afterAll(async () => {
    await server.stop();
  });

  it('a signature spelled with percent-escapes is masked in the access log as the plain one is', async () => {
    const address = (await (await fetch(`${server.url}/upload/${SAMPLE_PATH}`)).json()) as string;
    const signature = new URL(address).searchParams.get('signature')!;
    const respelled = address.replace('signature=', 'sig%6Eature=');
    // The store reads the decoded name: the address still works...
    expect((await fetch(respelled, { method: 'PUT', body: 'bytes', headers: { 'Content-Type': '' } })).status).toBe(200);
    await vi.waitFor(() => expect(JSON.stringify(lines)).toContain('sig%6Eature=[redacted]'), { timeout: 10_000, interval: 10 });
    // ...and the log never holds the signature, whatever its spelling.
    expect(JSON.stringify(lines)).not.toContain(signature);
    expect(lines.some((l) => JSON.stringify(l).includes('sig%6Eature=[redacted]'))).toBe(true);
  });

  it('Expect: 100-continue with a declared size over the limit gets 413 and no 100 Continue', async () => {
    const address = new URL((await (await fetch(`${server.url}/upload/${SAMPLE_PATH.replace('v00-01', 'v00-02')}`)).json()) as string);
    const answer = await rawExchange(
      server.url,
      `PUT ${address.pathname}${address.search} HTTP/1.1\r\nHost: ${address.host}\r\nContent-Length: 5000\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.text.startsWith('HTTP/1.1 100')).toBe(false);
    expect(answer.status).toBe(413);
  });

  it('Expect: 100-continue within the limit is told to continue, then stored', async () => {
    const address = new URL((await (await fetch(`${server.url}/upload/${SAMPLE_PATH.replace('v00-01', 'v00-03')}`)).json()) as string);
    const status = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: address.hostname, port: Number(address.port) });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        // The body goes only once the server said so.
        if (text.startsWith('HTTP/1.1 100') && !text.includes('stored')) {
          text += 'stored';
          socket.write('12345');
        }
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        `PUT ${address.pathname}${address.search} HTTP/1.1\r\nHost: ${address.host}\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      );
    });
    expect(status).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nstoredHTTP\/1\.1 200/);
  });

  it('HEAD /events answers at once instead of opening a feed', async () => {
    const answer = await rawGet(server.url, '/events', {}, 'HEAD');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
  });

  it('a client that hangs up mid-upload is logged as such, not as an error with a stack', async () => {
    const address = new URL((await (await fetch(`${server.url}/upload/${SAMPLE_PATH.replace('v00-01', 'v00-04')}`)).json()) as string);
    const before = lines.length;
    // Hang up once the server has taken the request and begun on its body; then wait until the
    // server has seen the hang-up and answered a later request, so any line about it is written.
    const cut = await new Promise<IncomingMessage>((resolve) => {
      server.app.server.once('request', (request: IncomingMessage) => {
        setImmediate(() => {
          socket.destroy();
          resolve(request);
        });
      });
      const socket = connect({ host: address.hostname, port: Number(address.port) }, () => {
        socket.write(`PUT ${address.pathname}${address.search} HTTP/1.1\r\nHost: ${address.host}\r\nContent-Length: 900\r\n\r\n0123456789`);
      });
    });
    if (!cut.closed) await new Promise((resolve) => cut.once('close', resolve));
    expect((await rawGet(server.url, '/nowhere/after-the-hang-up')).status).toBe(404);
    await vi.waitFor(() => expect(JSON.stringify(lines.slice(before))).toContain('/nowhere/after-the-hang-up'), { timeout: 10_000, interval: 10 });
    const after = lines.slice(before);
    expect(after.filter((l) => Number(l.level) >= 50)).toEqual([]);
    expect(JSON.stringify(after)).not.toMatch(/"stack"/);
  });
});

describe('headers must arrive within 10 s', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('a client that drips its headers is cut off near 10 s, not 30 s', async () => {
    const { hostname, port } = new URL(server.url);
    const started = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'));
      // One header line a few seconds apart, never the blank line that ends them.
      const drip = setInterval(() => socket.write('X-Drip: 1\r\n'), 3000);
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        resolve(Date.now() - started);
      });
    });
    expect(closedAfter).toBeGreaterThanOrEqual(9_000);
    expect(closedAfter).toBeLessThan(15_000);
  }, 40_000);
});
