import { connect } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Everything the server sent, as text. */
  readonly text: string;
}

/**
 * Sends bytes exactly as given to the server behind `base` and reads until it closes the
 * connection (send `Connection: close`); `halfClose` sends FIN right after the bytes. For
 * what fetch would normalise or refuse: encoded paths, absolute-form targets, broken framing.
 */
export function rawExchange(base: string, bytes: string | Buffer, { timeoutMs = 10_000, halfClose = false } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1')));
    });
    // Node drops the answer to a request whose client half-closed before it was ready
    // (no httpAllowHalfOpen), so the connection stays open unless asked.
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

/** A GET with the given request target, byte for byte. */
export function rawGet(base: string, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  const { host } = new URL(base);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return rawExchange(base, `${lines.join('\r\n')}\r\n\r\n`);
}

function parseAnswer(text: string): RawAnswer {
  // A 100 Continue may come first; the answer is the last status line's.
  const final = text.replace(/^HTTP\/1\.1 100 [^\r\n]*\r\n\r\n/, '');
  const end = final.indexOf('\r\n\r\n');
  const head = end < 0 ? final : final.slice(0, end);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: end < 0 ? '' : final.slice(end + 4), text };
}
